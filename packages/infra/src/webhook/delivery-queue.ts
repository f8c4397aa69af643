import { sql, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { toDate } from '../person/person.rows.js'

/** A delivery an instance holds the lease of, with what it needs to send it. */
export interface ClaimedDelivery {
  id: string
  webhookId: string
  eventId: string
  body: string
  /** Counting this one. */
  attempts: number
  giveUpAt: Date
}

export interface DueWebhook {
  id: string
  url: string
  sealedSecret: string
}

/** The smallest UUIDv7 of an instant: every id made at or after it sorts after it. */
export const uuidv7Floor = (at: Date): string => {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7000-8000-000000000000`
}

export type Completion =
  | { status: 'delivered' | 'failed', lastStatusCode: number | null }
  | { status: 'pending', lastStatusCode: number | null, nextAttemptAt: Date }

/**
 * The deliveries as a queue of leases, over webhook_delivery. A claim moves
 * a due row's next_attempt_at to the end of the lease and writes the
 * claimer's token: one statement, so two instances never claim one row
 * (PostgreSQL: the rows are picked FOR UPDATE SKIP LOCKED, so claimers pass
 * each other's rows by; SQLite: one writer at a time, and the update
 * re-checks that the row is still due). A completion counts only while the
 * token is still the row's: a lease that ran out and was claimed again, or
 * a manual retry, has moved on.
 */
export const deliveryQueue = (db: Kysely<Database>, dialect: Dialect) => ({
  /** Enabled webhooks with a delivery due at `now`. */
  async dueWebhooks (now: Date): Promise<DueWebhook[]> {
    const rows = await db.selectFrom('webhook').select(['id', 'url', 'sealed_secret']).where('disabled', '=', 0)
      .where(({ exists, selectFrom }) => exists(selectFrom('webhook_delivery').select(sql.lit(1).as('due'))
        .whereRef('webhook_delivery.webhook_id', '=', 'webhook.id')
        .where('status', '=', 'pending').where('next_attempt_at', '<=', now.toISOString())))
      .execute()
    return rows.map((row) => ({ id: row.id, url: row.url, sealedSecret: row.sealed_secret }))
  },

  /** Claims up to `limit` due deliveries of one webhook, oldest due first, until `leaseUntil`. */
  async claim (webhookId: string, limit: number, now: Date, leaseUntil: Date, token: string): Promise<ClaimedDelivery[]> {
    const due = db.selectFrom('webhook_delivery').select('id')
      .where('webhook_id', '=', webhookId).where('status', '=', 'pending').where('next_attempt_at', '<=', now.toISOString())
      .orderBy('next_attempt_at').limit(limit)
    const claim = { claim: token, next_attempt_at: leaseUntil.toISOString(), attempts: sql<number>`attempts + 1` }
    const columns = ['webhook_delivery.id', 'webhook_id', 'event_id', 'body', 'attempts', 'give_up_at'] as const
    // PostgreSQL: the rows picked once, in a CTE, locked and skipped by
    // other claimers; as `id IN (subquery)` the planner may run the
    // subquery again per row, and SKIP LOCKED then picks others.
    const rows = dialect === 'postgres'
      ? await db.with('due', () => due.forUpdate().skipLocked()).updateTable('webhook_delivery').set(claim)
        .from('due').whereRef('webhook_delivery.id', '=', 'due.id').returning(columns).execute()
      : await db.updateTable('webhook_delivery').set(claim)
        .where('id', 'in', due).where('status', '=', 'pending').where('next_attempt_at', '<=', now.toISOString())
        .returning(columns).execute()
    return rows.map((row) => ({ id: row.id, webhookId: row.webhook_id, eventId: row.event_id, body: row.body, attempts: row.attempts, giveUpAt: toDate(row.give_up_at) }))
  },

  /** Records an attempt's outcome; false when the lease was no longer this claimer's. */
  async complete (id: string, token: string, completion: Completion): Promise<boolean> {
    const result = await db.updateTable('webhook_delivery').set({
      status: completion.status,
      last_status_code: completion.lastStatusCode,
      next_attempt_at: completion.status === 'pending' ? completion.nextAttemptAt.toISOString() : null,
      claim: null
    }).where('id', '=', id).where('claim', '=', token).executeTakeFirst()
    return result.numUpdatedRows > 0n
  },

  /** An endpoint that answered 410 Gone is disabled: nothing more is sent to it. */
  async disable (webhookId: string): Promise<void> {
    await db.updateTable('webhook').set({ disabled: 1 }).where('id', '=', webhookId).execute()
  },

  /**
   * Deletes at most `limit` of the finished (delivered or failed) deliveries
   * queued before `before`; answers how many went. Delivery ids are UUIDv7,
   * in the order they were queued, so the oldest are a range of the primary key.
   */
  async pruneBefore (before: Date, limit: number): Promise<number> {
    const oldest = db.selectFrom('webhook_delivery').select('id')
      .where('id', '<', uuidv7Floor(before)).where('status', '<>', 'pending').orderBy('id').limit(limit)
    const result = await db.deleteFrom('webhook_delivery').where('id', 'in', oldest).executeTakeFirst()
    return Number(result.numDeletedRows)
  },

  /** Each webhook's oldest pending delivery, by when its event was queued. */
  async oldestPending (): Promise<Array<{ webhookId: string, since: Date }>> {
    const rows = await db.selectFrom('webhook_delivery').select(['webhook_id', (eb) => eb.fn.min('created_at').as('since')])
      .where('status', '=', 'pending').groupBy('webhook_id').execute()
    return rows.map((row) => ({ webhookId: row.webhook_id, since: toDate(row.since as string | Date) }))
  }
})

export type DeliveryQueue = ReturnType<typeof deliveryQueue>
