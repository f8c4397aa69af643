import type { Account } from '../account/account.js'
import type { AccountRepository } from '../account/account.repository.js'
import type { ApiKey } from '../api-key/api-key.js'
import type { ApiKeyRepository } from '../api-key/api-key.repository.js'
import type { ApiKeyUsageRepository } from '../api-key/api-key-usage.js'
import { DomainError } from '../errors.js'

const clone = <T>(value: T): T => structuredClone(value)

export const inMemoryAccountRepository = (): AccountRepository => {
  const accounts = new Map<string, Account>()
  return {
    async insert (account) {
      for (const a of accounts.values()) {
        if (a.username === account.username) throw new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(account.username)} is taken`, 'username')
      }
      accounts.set(account.id, clone(account))
    },
    async findById (id) {
      const account = accounts.get(id)
      return account && clone(account)
    },
    async findByUsername (username) {
      const account = [...accounts.values()].find((a) => a.username === username)
      return account && clone(account)
    }
  }
}

export const inMemoryApiKeyRepository = (): ApiKeyRepository => {
  const keys = new Map<string, ApiKey>()
  return {
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
    async listActive ({ ownerId, limit }) {
      return [...keys.values()]
        .filter((k) => k.revokedAt === null && (ownerId === undefined || k.ownerId === ownerId))
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1))
        .slice(0, limit)
        .map(clone)
    },
    async revoke (id, at) {
      const key = keys.get(id)
      if (key === undefined || key.revokedAt !== null) return false
      key.revokedAt = at
      return true
    }
  }
}

export const inMemoryApiKeyUsageRepository = (): ApiKeyUsageRepository => {
  const usage = new Map<string, Map<string, number>>()
  return {
    async add (counts) {
      for (const { keyId, day, requests } of counts) {
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
