import { type AccountView, isUsername, toAccountView } from '../account/account.js'
import type { Ports } from '../ports.js'
import { cursorNotIssued, decodeListCursor, listKey, type Page, toPage } from '../shared/page.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListAccountsInput {
  limit?: number
  cursor?: string
}

/** A username, as every cursor of this list holds; anything else is not one the service issued. */
const decodeAccountsCursor = (cursor: string): string => {
  const [username] = decodeListCursor(cursor, 'accounts', 1)
  if (!isUsername(username)) throw cursorNotIssued()
  return username
}

/** Accounts ordered by username, a page at a time; who may list them is the adapters' policy (admins). */
export const listAccounts = ({ accounts }: Pick<Ports, 'accounts'>) =>
  async (input: ListAccountsInput = {}): Promise<Page<AccountView>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.accounts.default, LIST_LIMITS.accounts.max)
    const afterUsername = input.cursor === undefined ? undefined : decodeAccountsCursor(input.cursor)
    const rows = await accounts.list({ limit: limit + 1, ...(afterUsername === undefined ? {} : { afterUsername }) })
    return toPage(rows.map(toAccountView), limit, (a) => listKey('accounts', a.username))
  }
