import type { Account } from '../account/account.js'
import { isEnabledAdmin, usernameKey } from '../account/account.js'
import type { AccountChangeSet, AccountRepository } from '../account/account.repository.js'
import type { ApiKey } from '../api-key/api-key.js'
import type { ApiKeyRepository } from '../api-key/api-key.repository.js'
import type { ApiKeyUsageRepository } from '../api-key/api-key-usage.js'
import { DomainError } from '../errors.js'
import { inMemoryEventLog, type InMemoryEventLog } from './in-memory-changes.js'

const clone = <T>(value: T): T => structuredClone(value)

/**
 * Accounts in memory. `onDeleted` removes what an account owns (keys and
 * their usage), as the database's transaction does, and `shedKeys` asks it
 * too (`delete` takes any number of keys at once here).
 */
export const inMemoryAccountRepository = (onDeleted: (accountId: string) => void = () => {}, log: InMemoryEventLog = inMemoryEventLog()): AccountRepository => {
  let accounts = new Map<string, Account>()
  // One change at a time, as the databases serialise them.
  let changing: Promise<unknown> = Promise.resolve()
  const taken = (all: Map<string, Account>, account: Account): void => {
    for (const a of all.values()) {
      if (usernameKey(a.username) === usernameKey(account.username)) throw new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(account.username)} is taken`, 'username')
    }
  }
  const changeSet = (working: Map<string, Account>, deleted: string[], changes: AccountChangeSet['changes']): AccountChangeSet => ({
    changes,
    async insert (account) {
      taken(working, account)
      working.set(account.id, clone(account))
    },
    async findById (id) {
      const account = working.get(id)
      return account && clone(account)
    },
    async countEnabledAdmins () {
      return [...working.values()].filter(isEnabledAdmin).length
    },
    async update (account) {
      if (working.has(account.id)) working.set(account.id, clone(account))
    },
    async delete (id) {
      working.delete(id)
      deleted.push(id)
      return true
    }
  })
  return {
    async insert (account) {
      for (const a of accounts.values()) {
        if (usernameKey(a.username) === usernameKey(account.username)) throw new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(account.username)} is taken`, 'username')
      }
      accounts.set(account.id, clone(account))
    },
    async findById (id) {
      const account = accounts.get(id)
      return account && clone(account)
    },
    async findByUsername (username) {
      const account = [...accounts.values()].find((a) => usernameKey(a.username) === usernameKey(username))
      return account && clone(account)
    },
    async list ({ afterUsername, limit }) {
      return [...accounts.values()]
        .filter((a) => afterUsername === undefined || a.username > afterUsername)
        .sort((a, b) => (a.username < b.username ? -1 : 1))
        .slice(0, limit)
        .map(clone)
    },
    async shedKeys (id) {
      onDeleted(id)
    },
    changeExclusively (work) {
      const run = changing.catch(() => {}).then(async () => {
        // Work on a copy, kept only when the work succeeds: all or nothing.
        const working = new Map(accounts)
        const deleted: string[] = []
        const unit = log.begin()
        const result = await work(changeSet(working, deleted, unit.changes))
        accounts = working
        unit.commit()
        for (const id of deleted) onDeleted(id)
        return result
      })
      changing = run
      return run
    }
  }
}

export const inMemoryApiKeyRepository = (): ApiKeyRepository & { removeOwnedBy(ownerId: string): string[] } => {
  const keys = new Map<string, ApiKey>()
  return {
    /** Removes an account's keys; answers their ids. */
    removeOwnedBy (ownerId) {
      const removed = [...keys.values()].filter((k) => k.ownerId === ownerId).map((k) => k.id)
      for (const id of removed) keys.delete(id)
      return removed
    },
    async insert (key) {
      keys.set(key.id, clone(key))
    },
    async findById (id) {
      const key = keys.get(id)
      return key && clone(key)
    },
    async findByLookupId (lookupId) {
      const key = [...keys.values()].find((k) => k.lookupId === lookupId)
      return key && clone(key)
    },
    async listActive ({ ownerId, limit, after }) {
      const order = (a: Pick<ApiKey, 'createdAt' | 'id'>, b: Pick<ApiKey, 'createdAt' | 'id'>): number =>
        a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
      return [...keys.values()]
        .filter((k) => k.revokedAt === null && (ownerId === undefined || k.ownerId === ownerId))
        .filter((k) => after === undefined || order(k, { createdAt: after.at, id: after.id }) > 0)
        .sort(order)
        .slice(0, limit)
        .map(clone)
    },
    async countActive (ownerId) {
      return [...keys.values()].filter((k) => k.revokedAt === null && k.ownerId === ownerId).length
    },
    async revoke (id, at) {
      const key = keys.get(id)
      if (key === undefined || key.revokedAt !== null) return false
      key.revokedAt = at
      return true
    }
  }
}

export const inMemoryApiKeyUsageRepository = (): ApiKeyUsageRepository & { remove(keyIds: string[]): void } => {
  const usage = new Map<string, Map<string, number>>()
  // Keys whose account was deleted: their counts go nowhere, as the databases' foreign key has it.
  const removed = new Set<string>()
  return {
    remove (keyIds) {
      for (const id of keyIds) {
        usage.delete(id)
        removed.add(id)
      }
    },
    async add (counts) {
      for (const { keyId, day, requests } of counts) {
        if (removed.has(keyId)) continue
        const days = usage.get(keyId) ?? new Map<string, number>()
        days.set(day, (days.get(day) ?? 0) + requests)
        usage.set(keyId, days)
      }
    },
    async byDay (keyId) {
      return [...usage.get(keyId) ?? []].map(([day, requests]) => ({ day, requests })).sort((a, b) => (a.day < b.day ? -1 : 1))
    }
  }
}
