import type { IdempotencyRecord, IdempotencyRepository } from '../idempotency/idempotency.repository.js'

const idOf = (scope: string, key: string): string => JSON.stringify([scope, key])

export const inMemoryIdempotencyRepository = (records = new Map<string, IdempotencyRecord>()): IdempotencyRepository => ({
  async claim ({ scope, key, fingerprint, token, lockedUntil, expiresAt }, now) {
    const held = records.get(idOf(scope, key))
    if (held !== undefined && held.expiresAt > now) return { claimed: false, record: structuredClone(held) }
    records.set(idOf(scope, key), { fingerprint, token, response: null, lockedUntil, expiresAt })
    return { claimed: true }
  },
  async takeOver ({ scope, key, fingerprint, token, lockedUntil, expiresAt }, previousToken) {
    const held = records.get(idOf(scope, key))
    if (held === undefined || held.token !== previousToken || held.response !== null) return false
    records.set(idOf(scope, key), { fingerprint, token, response: null, lockedUntil, expiresAt })
    return true
  },
  async complete (scope, key, token, response) {
    const held = records.get(idOf(scope, key))
    if (held === undefined || held.token !== token) return false
    held.response = response
    return true
  },
  async release (scope, key, token) {
    const held = records.get(idOf(scope, key))
    if (held !== undefined && held.token === token && held.response === null) records.delete(idOf(scope, key))
  },
  async pruneExpired (now, limit) {
    const expired = [...records].filter(([, record]) => record.expiresAt <= now)
      .sort(([, a], [, b]) => a.expiresAt.getTime() - b.expiresAt.getTime())
      .slice(0, limit)
    for (const [id] of expired) records.delete(id)
    return expired.length
  }
})
