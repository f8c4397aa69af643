import { type ChangeFeed, checkEventTypes, type Clock, type IdGenerator, toCloudEvent, wantsEvent } from '@people-service/domain'
import { sql, type Kysely } from 'kysely'
import type { Database, Dialect, WebhookDeliveryTable } from '../database.js'
import { kyselyChangeFeed } from '../event/event-log.js'

export interface RelaySettings {
  /** Events turned into deliveries per transaction. */
  batch: number
  /** How often the log is looked at when the last look found it read to the end. */
  pollMs: number
  /** How long a delivery is retried: its give_up_at. */
  retryWindowMs: number
}

const INSERT_CHUNK = 200

/** How long after a commit of this process the relay steps: the commits of a burst share one step. */
const COMMIT_COALESCE_MS = 20

// The feed the relay reads through its own transaction is for reading only.
const NO_COMMITS = { onCommit: () => () => {} }

/**
 * Turns the event log into deliveries: one row per event and enabled
 * webhook that wants its type, in the log's order, after the position
 * kept in webhook_relay. Each step is one transaction that starts by
 * updating that row, so steps of several instances take turns
 * (PostgreSQL: the row's lock; SQLite: one writer); the unique
 * (webhook_id, event_id) makes a repeated step harmless all the same.
 */
export const webhookRelay = (options: {
  db: Kysely<Database>
  dialect: Dialect
  /** The log: its last position, and word of this process' commits, which start a step at once. */
  feed: Pick<ChangeFeed, 'lastPosition' | 'onCommit'>
  clock: Clock
  ids: IdGenerator
  settings: RelaySettings
  /** After a step that queued deliveries. */
  onQueued: () => void
  log: { error(object: Record<string, unknown>, message: string): void }
}) => {
  const { db, dialect, clock, ids, settings } = options
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let current: Promise<void> = Promise.resolve()

  /** One batch: how many events it handled and how many deliveries it queued. */
  const step = (): Promise<{ events: number, deliveries: number }> => db.transaction().execute(async (trx) => {
    const relay = await trx.updateTable('webhook_relay').set({ position: sql`position` }).where('id', '=', 1).returning('position').executeTakeFirstOrThrow()
    // Read in the same transaction: on SQLite it holds the one connection.
    const batch = await kyselyChangeFeed(trx, dialect, NO_COMMITS).after({ after: Number(relay.position), limit: settings.batch })
    const last = batch.at(-1)
    if (last === undefined) return { events: 0, deliveries: 0 }
    const webhooks = (await trx.selectFrom('webhook').select(['id', 'types']).where('disabled', '=', 0).orderBy('id').execute())
      .map((row) => ({ id: row.id, disabled: false, types: checkEventTypes(row.types === '' ? [] : row.types.split(' ')) }))
    const now = clock.now()
    const queued = now.toISOString()
    const giveUpAt = new Date(now.getTime() + settings.retryWindowMs).toISOString()
    const rows: WebhookDeliveryTable[] = []
    for (const event of batch) {
      const body = JSON.stringify(toCloudEvent(event))
      for (const webhook of webhooks) {
        if (!wantsEvent(webhook, event.type)) continue
        rows.push({
          id: ids.next(),
          webhook_id: webhook.id,
          event_id: event.id,
          body,
          status: 'pending',
          attempts: 0,
          last_status_code: null,
          next_attempt_at: queued,
          claim: null,
          give_up_at: giveUpAt,
          created_at: queued
        })
      }
    }
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await trx.insertInto('webhook_delivery').values(rows.slice(i, i + INSERT_CHUNK))
        .onConflict((conflict) => conflict.columns(['webhook_id', 'event_id']).doNothing()).execute()
    }
    await trx.updateTable('webhook_relay').set({ position: dialect === 'postgres' ? String(last.position) : last.position }).where('id', '=', 1).execute()
    return { events: batch.length, deliveries: rows.length }
  })

  /** Whether the log holds events past the relay's position: two reads, no write, when it does not. */
  const behind = async (): Promise<boolean> => {
    const relay = await db.selectFrom('webhook_relay').select('position').where('id', '=', 1).executeTakeFirstOrThrow()
    return await options.feed.lastPosition() > Number(relay.position)
  }

  /** Steps until the log is read to the end. */
  const drain = async (): Promise<void> => {
    if (!await behind()) return
    for (;;) {
      if (stopped) return
      const { events: handled, deliveries } = await step()
      if (deliveries > 0) options.onQueued()
      if (handled < settings.batch) return
    }
  }

  let running = false
  let again = false
  let unsubscribe: (() => void) | undefined

  const tick = (): void => {
    clearTimeout(timer)
    soon = false
    if (stopped) return
    if (running) {
      again = true
      return
    }
    running = true
    current = drain()
      .catch((error: unknown) => options.log.error({ err: error }, 'events could not be turned into webhook deliveries; trying again'))
      .finally(() => {
        running = false
        if (stopped) return
        if (again) {
          again = false
          timer = setTimeout(tick, COMMIT_COALESCE_MS)
        } else {
          timer = setTimeout(tick, settings.pollMs)
        }
      })
  }

  let soon = false
  /** A commit of this process: a step soon, one for every commit of a burst. */
  const nudge = (): void => {
    if (running) {
      again = true
      return
    }
    if (soon) return
    soon = true
    clearTimeout(timer)
    timer = setTimeout(tick, COMMIT_COALESCE_MS)
  }

  return {
    step,
    start () {
      unsubscribe = options.feed.onCommit(nudge)
      tick()
    },
    async stop () {
      stopped = true
      unsubscribe?.()
      clearTimeout(timer)
      await current
    }
  }
}

export type WebhookRelay = ReturnType<typeof webhookRelay>
