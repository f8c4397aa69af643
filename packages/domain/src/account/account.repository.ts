import type { ChangeLog } from '../change/change-event.js'
import type { Account } from './account.js'

/** Port: where accounts are kept. */
export interface AccountRepository {
  /** Throws USERNAME_TAKEN when an account of that name exists. */
  insert(account: Account): Promise<void>
  findById(id: string): Promise<Account | undefined>
  /** The account whose username is the same without regard to case (usernameKey). */
  findByUsername(username: string): Promise<Account | undefined>
  /** Accounts ordered by username, those after `afterUsername` when given, at most `limit`. */
  list(query: { afterUsername?: string, limit: number }): Promise<Account[]>
  /**
   * Runs `work` in one transaction during which no other account change can
   * run, so a rule over several accounts (the last enabled admin) holds when
   * two admins change accounts at once. When `work` throws nothing it wrote
   * stays.
   */
  changeExclusively<T>(work: (accounts: AccountChangeSet) => Promise<T>): Promise<T>
  /**
   * Deletes an account's API keys and their usage a step at a time, each
   * step its own transaction, awaiting `beforeNextStep` between steps: for
   * an account whose `delete` answered false. The account itself stays.
   */
  shedKeys(id: string, beforeNextStep?: () => Promise<void>): Promise<void>
}

/** What a transaction of `changeExclusively` may read and write. */
export interface AccountChangeSet {
  /** Throws USERNAME_TAKEN when an account of that name exists. */
  insert(account: Account): Promise<void>
  findById(id: string): Promise<Account | undefined>
  countEnabledAdmins(): Promise<number>
  /** Stores role, disabled, password hash and token version of an existing account. */
  update(account: Account): Promise<void>
  /**
   * Removes the account with its API keys and their usage (the people and
   * messages it wrote stay) and answers true; or, when that is more than a
   * transaction should hold (a store that runs on the event loop, an
   * account with very many keys), removes nothing and answers false:
   * `shedKeys` first, then `delete` again.
   */
  delete(id: string): Promise<boolean>
  /** The events of the transaction's changes: they commit with them. */
  changes: ChangeLog
}
