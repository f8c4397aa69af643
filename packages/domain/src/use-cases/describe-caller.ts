import { type AccountView, toAccountView } from '../account/account.js'
import type { Scope } from '../account/account.js'
import type { Caller } from '../caller/caller.js'
import { accountNotFound } from '../errors.js'
import type { Ports } from '../ports.js'

export interface CallerDescription extends AccountView {
  /** What this credential may do now: a key's scopes within its account's. */
  scopes: Scope[]
}

/** The account a caller acts for (a key: its owner), with the caller's own scopes. */
export const describeCaller = ({ accounts }: Pick<Ports, 'accounts'>) =>
  async (caller: Caller): Promise<CallerDescription> => {
    const account = await accounts.findById(caller.accountId)
    if (account === undefined) throw accountNotFound(caller.accountId)
    return { ...toAccountView(account), scopes: [...caller.scopes] }
  }
