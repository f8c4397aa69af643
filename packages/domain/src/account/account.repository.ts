import type { Account } from './account.js'

/** Port: where accounts are kept. */
export interface AccountRepository {
  /** Throws USERNAME_TAKEN when an account of that name exists. */
  insert(account: Account): Promise<void>
  findById(id: string): Promise<Account | undefined>
  /** Exact, case-sensitive match. */
  findByUsername(username: string): Promise<Account | undefined>
}
