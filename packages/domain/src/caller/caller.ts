import { SCOPES_OF_ROLE, type Role, type Scope } from '../account/account.js'
import type { ApiKey } from '../api-key/api-key.js'

/** Who is calling, once their credentials have been verified. */
export interface Caller {
  /**
   * The account or API key id: what a message records as its sender, what
   * usage limits count against.
   */
  id: string
  kind: 'account' | 'apiKey'
  /** The account acting: the caller itself, or the owner of the key. */
  accountId: string
  scopes: readonly Scope[]
  /** Requests per window allowed to this caller; null: the service's default. */
  rateLimit: number | null
}

export const accountCaller = (account: { id: string, role: Role }): Caller => ({
  id: account.id,
  kind: 'account',
  accountId: account.id,
  scopes: SCOPES_OF_ROLE[account.role],
  rateLimit: null
})

/** A key acts with its own scopes only as far as its account's role still grants them. */
export const apiKeyCaller = (key: ApiKey, owner: { role: Role }): Caller => {
  const granted = SCOPES_OF_ROLE[owner.role]
  return {
    id: key.id,
    kind: 'apiKey',
    accountId: key.ownerId,
    scopes: key.scopes.filter((scope) => granted.includes(scope)),
    rateLimit: key.rateLimit
  }
}

export const hasScope = (caller: Caller, scope: Scope): boolean => caller.scopes.includes(scope)
