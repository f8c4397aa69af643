import { checkEventTypes, type StoredWebhook, WEBHOOK_LIMITS, type WebhookDelivery, type WebhookRepository } from '@people-service/domain'
import type { Kysely } from 'kysely'
import type { Database, WebhookDeliveryRow, WebhookRow } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { toDate } from '../person/person.rows.js'

const toWebhook = (row: WebhookRow): StoredWebhook => ({
  id: row.id,
  url: row.url,
  types: checkEventTypes(row.types === '' ? [] : row.types.split(' ')),
  description: row.description,
  disabled: row.disabled !== 0,
  createdAt: toDate(row.created_at),
  sealedSecret: row.sealed_secret
})

export const toDelivery = (row: Pick<WebhookDeliveryRow, 'id' | 'webhook_id' | 'event_id' | 'status' | 'attempts' | 'last_status_code' | 'next_attempt_at'>): WebhookDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  status: row.status,
  attempts: row.attempts,
  lastStatusCode: row.last_status_code,
  nextAttemptAt: row.next_attempt_at === null ? null : toDate(row.next_attempt_at)
})

const DELIVERY_COLUMNS = ['id', 'webhook_id', 'event_id', 'status', 'attempts', 'last_status_code', 'next_attempt_at'] as const

export const kyselyWebhookRepository = (db: Kysely<Database>): WebhookRepository => translateErrors({
  async insert (webhook) {
    await db.insertInto('webhook').values({
      id: webhook.id,
      url: webhook.url,
      types: webhook.types.join(' '),
      description: webhook.description,
      disabled: webhook.disabled ? 1 : 0,
      sealed_secret: webhook.sealedSecret,
      created_at: webhook.createdAt.toISOString()
    }).execute()
  },

  async findById (id) {
    const row = await db.selectFrom('webhook').selectAll().where('id', '=', id).executeTakeFirst()
    return row && toWebhook(row)
  },

  async list ({ limit, afterId }) {
    let query = db.selectFrom('webhook').selectAll()
    if (afterId !== undefined) query = query.where('id', '>', afterId)
    return (await query.orderBy('id').limit(limit).execute()).map(toWebhook)
  },

  async count () {
    const row = await db.selectFrom('webhook').select((eb) => eb.fn.countAll<number | string>().as('count')).executeTakeFirstOrThrow()
    return Number(row.count)
  },

  async update (id, changes) {
    const row = await db.updateTable('webhook').set({
      ...(changes.url === undefined ? {} : { url: changes.url }),
      ...(changes.types === undefined ? {} : { types: changes.types.join(' ') }),
      ...(changes.description === undefined ? {} : { description: changes.description }),
      ...(changes.disabled === undefined ? {} : { disabled: changes.disabled ? 1 : 0 })
    }).where('id', '=', id).returningAll().executeTakeFirst()
    return row && toWebhook(row)
  },

  // Its deliveries go with it (ON DELETE CASCADE).
  async remove (id) {
    const result = await db.deleteFrom('webhook').where('id', '=', id).executeTakeFirst()
    return result.numDeletedRows > 0n
  },

  async listDeliveries ({ webhookId, limit, beforeId }) {
    let query = db.selectFrom('webhook_delivery').select(DELIVERY_COLUMNS).where('webhook_id', '=', webhookId)
    if (beforeId !== undefined) query = query.where('id', '<', beforeId)
    return (await query.orderBy('id', 'desc').limit(limit).execute()).map(toDelivery)
  },

  // The claim is dropped: an attempt in flight finishes, but its outcome no longer counts.
  async retryDelivery (webhookId, deliveryId, at) {
    const result = await db.updateTable('webhook_delivery').set({
      status: 'pending', next_attempt_at: at.toISOString(), claim: null, give_up_at: new Date(at.getTime() + WEBHOOK_LIMITS.retryWindowMs).toISOString()
    }).where('id', '=', deliveryId).where('webhook_id', '=', webhookId).executeTakeFirst()
    return result.numUpdatedRows > 0n
  }
})
