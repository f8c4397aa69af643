import { type AccountView, toAccountView } from '../account/account.js'
import type { Ports } from '../ports.js'
import { decodeCursor, type Page, toPage } from '../shared/page.js'
import { checkLimit, LIST_LIMITS } from './limits.js'

export interface ListAccountsInput {
  limit?: number
  cursor?: string
}

/** Accounts ordered by username, a page at a time; who may list them is the adapters' policy (admins). */
export const listAccounts = ({ accounts }: Pick<Ports, 'accounts'>) =>
  async (input: ListAccountsInput = {}): Promise<Page<AccountView>> => {
    const limit = checkLimit(input.limit ?? LIST_LIMITS.accounts.default, LIST_LIMITS.accounts.max)
    const afterUsername = input.cursor === undefined ? undefined : decodeCursor(input.cursor, 1)[0]
    const rows = await accounts.list({ limit: limit + 1, ...(afterUsername === undefined ? {} : { afterUsername }) })
    return toPage(rows.map(toAccountView), limit, (a) => [a.username])
  }
