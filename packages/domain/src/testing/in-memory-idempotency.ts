import type { IdempotencyClaim, IdempotencyRecord, IdempotencyRepository } from '../idempotency/idempotency.repository.js'

const idOf = (scope: string, key: string): string => JSON.stringify([scope, key])

/** A record as kept here: with its owner, whose allowance it counts against. */
export type StoredRecord = IdempotencyRecord & { owner: string }

const claimed = ({ fingerprint, token, lockedUntil, expiresAt, owner }: IdempotencyClaim): StoredRecord =>
  ({ fingerprint, token, response: null, subject: null, erased: false, lockedUntil, expiresAt, owner })

const recordOf = ({ owner: _owner, ...record }: StoredRecord): IdempotencyRecord => structuredClone(record)

/** What PersonRepository.delete does to the records of a person it deletes. */
export const eraseAnswersAbout = (records: Map<string, StoredRecord>, personId: string): void => {
  for (const record of records.values()) {
    if (record.subject === personId) Object.assign(record, { response: null, erased: true })
  }
}

export const inMemoryIdempotencyRepository = (records = new Map<string, StoredRecord>()): IdempotencyRepository => ({
  async claim (claim, now) {
    const held = records.get(idOf(claim.scope, claim.key))
    if (held !== undefined && held.expiresAt > now) return { claimed: false, record: recordOf(held) }
    records.set(idOf(claim.scope, claim.key), claimed(claim))
    return { claimed: true }
  },
  async takeOver (claim, previousToken) {
    const held = records.get(idOf(claim.scope, claim.key))
    if (held === undefined || held.token !== previousToken || held.response !== null || held.erased) return false
    records.set(idOf(claim.scope, claim.key), claimed(claim))
    return true
  },
  async complete (scope, key, token, { subject, response }) {
    const held = records.get(idOf(scope, key))
    if (held === undefined || held.token !== token) return false
    Object.assign(held, { subject, response: structuredClone(response) })
    return true
  },
  async release (scope, key, token) {
    const held = records.get(idOf(scope, key))
    if (held !== undefined && held.token === token && held.response === null && !held.erased) records.delete(idOf(scope, key))
  },
  async liveRecordsOf (owner, now, atMost) {
    const live = [...records.values()].filter((record) => record.owner === owner && record.expiresAt > now)
      .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
    const count = Math.min(live.length, atMost)
    return { count, firstExpiry: count < atMost ? undefined : live[0]?.expiresAt }
  },
  async pruneExpired (now, limit) {
    const expired = [...records].filter(([, record]) => record.expiresAt <= now)
      .sort(([, a], [, b]) => a.expiresAt.getTime() - b.expiresAt.getTime())
      .slice(0, limit)
    for (const [id] of expired) records.delete(id)
    return expired.length
  }
})
