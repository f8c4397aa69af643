import type { IdempotencyClaim, IdempotencyRecord, IdempotencyRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, IdempotencyKeyRow } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'
import { packBody, unpackBody } from './stored-body.js'

const toRecord = (row: IdempotencyKeyRow): IdempotencyRecord => ({
  fingerprint: row.fingerprint,
  token: row.token,
  response: row.status === null || row.body === null
    ? null
    : { status: row.status, headers: JSON.parse(row.headers ?? '{}') as Record<string, string>, body: unpackBody(row.body) },
  subject: row.subject,
  erased: row.erased === 1,
  lockedUntil: toDate(row.locked_until),
  expiresAt: toDate(row.expires_at)
})

// A claim starts a record afresh: no answer, no subject, not erased.
const claimRow = (claim: IdempotencyClaim) => ({
  fingerprint: claim.fingerprint,
  token: claim.token,
  owner: claim.owner,
  subject: null,
  status: null,
  headers: null,
  body: null,
  erased: 0,
  locked_until: claim.lockedUntil.toISOString(),
  expires_at: claim.expiresAt.toISOString()
})

// A claim finds the key held, then the holder gone (released, pruned) before
// it reads the record: rare, and settled by claiming again.
const CLAIM_ATTEMPTS = 5

/*
 * Timestamps are compared as ISO-8601 text on SQLite (always written by
 * toISOString, so text order is time order) and as timestamptz on PostgreSQL.
 */
export const kyselyIdempotencyRepository = (db: Kysely<Database>): IdempotencyRepository => translateErrors({
  async claim (claim, now) {
    for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
      // One statement claims a free key or replaces an expired record, so
      // two claims can never both hold it; it returns a row only then.
      const claimed = await db.insertInto('idempotency_key')
        .values({ scope: claim.scope, key: claim.key, ...claimRow(claim) })
        .onConflict((conflict) => conflict.columns(['scope', 'key'])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            token: eb.ref('excluded.token'),
            owner: eb.ref('excluded.owner'),
            subject: null,
            status: null,
            headers: null,
            body: null,
            erased: 0,
            locked_until: eb.ref('excluded.locked_until'),
            expires_at: eb.ref('excluded.expires_at')
          }))
          .where('idempotency_key.expires_at', '<=', now.toISOString()))
        .returning('token')
        .executeTakeFirst()
      if (claimed !== undefined) return { claimed: true }
      const held = await db.selectFrom('idempotency_key').selectAll()
        .where('scope', '=', claim.scope).where('key', '=', claim.key).executeTakeFirst()
      if (held !== undefined) return { claimed: false, record: toRecord(held) }
    }
    throw new Error(`the idempotency key could not be claimed in ${CLAIM_ATTEMPTS} attempts`)
  },

  async takeOver (claim, previousToken) {
    const result = await db.updateTable('idempotency_key').set(claimRow(claim))
      .where('scope', '=', claim.scope).where('key', '=', claim.key)
      .where('token', '=', previousToken).where('status', 'is', null).where('erased', '=', 0)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  async complete (scope, key, token, { subject, response }) {
    const result = await db.updateTable('idempotency_key')
      .set({ subject, status: response.status, headers: JSON.stringify(response.headers), body: packBody(response.body) })
      .where('scope', '=', scope).where('key', '=', key).where('token', '=', token)
      .executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  async release (scope, key, token) {
    await db.deleteFrom('idempotency_key')
      .where('scope', '=', scope).where('key', '=', key).where('token', '=', token)
      .where('status', 'is', null).where('erased', '=', 0)
      .execute()
  },

  // Through the index on (owner, expires_at): at most `atMost` entries
  // read; the oldest is looked up only for an owner at the bound.
  async liveRecordsOf (owner, now, atMost) {
    const live = db.selectFrom('idempotency_key').select('expires_at')
      .where('owner', '=', owner).where('expires_at', '>', now.toISOString())
    const counted = await db.selectFrom(live.limit(atMost).as('live'))
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('count')).executeTakeFirstOrThrow()
    const count = Number(counted.count)
    if (count < atMost) return { count, firstExpiry: undefined }
    const first = await live.orderBy('expires_at').limit(1).executeTakeFirst()
    return { count, firstExpiry: first === undefined ? undefined : toDate(first.expires_at) }
  },

  // The oldest expired first, through the index on expires_at, then each by
  // its primary key: a bounded batch, however large the table.
  async pruneExpired (now, limit) {
    const result = await db.deleteFrom('idempotency_key')
      .where((eb) => eb(eb.refTuple('scope', 'key'), 'in',
        eb.selectFrom('idempotency_key').select(['scope', 'key'])
          .where('expires_at', '<=', now.toISOString()).orderBy('expires_at').limit(limit)
          .$asTuple('scope', 'key')))
      .executeTakeFirst()
    return Number(result.numDeletedRows)
  }
})
