import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * webhook: the endpoints, each with its signing secret sealed
 * (AES-256-GCM, webhook-secrets.ts), never in the clear.
 *
 * webhook_delivery: one row per event and webhook, holding the body as it
 * is signed and sent. A pending row is due at next_attempt_at; an instance
 * claims it by moving next_attempt_at to the end of its lease and writing
 * its claim token, so a claim left by a killed instance runs out and
 * another takes it. (webhook_id, event_id) is unique: an event is queued
 * once per webhook however often the relay runs. Indexes: the deliveries
 * of a webhook newest first (the log), the due ones (the dispatcher), the
 * oldest pending per webhook (metrics).
 *
 * webhook_relay: the last event position turned into deliveries.
 */
export const webhooks = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  const position = dialect === 'postgres' ? 'bigint' : 'integer'
  return {
    async up (db: Kysely<any>) {
      await db.schema.createTable('webhook')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('types', 'text', (c) => c.notNull())
        .addColumn('description', 'text')
        .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('sealed_secret', 'text', (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute()
      await db.schema.createTable('webhook_delivery')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhook.id').onDelete('cascade'))
        .addColumn('event_id', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_status_code', 'integer')
        .addColumn('next_attempt_at', timestamp)
        .addColumn('claim', 'text')
        .addColumn('give_up_at', timestamp, (c) => c.notNull())
        .addColumn('created_at', timestamp, (c) => c.notNull())
        .execute()
      await db.schema.createIndex('webhook_delivery_event').on('webhook_delivery').columns(['webhook_id', 'event_id']).unique().execute()
      await db.schema.createIndex('webhook_delivery_log').on('webhook_delivery').columns(['webhook_id', 'id']).execute()
      await db.schema.createIndex('webhook_delivery_due').on('webhook_delivery').columns(['next_attempt_at']).where(sql.ref('status'), '=', 'pending').execute()
      await db.schema.createIndex('webhook_delivery_pending').on('webhook_delivery').columns(['webhook_id', 'created_at']).where(sql.ref('status'), '=', 'pending').execute()
      await db.schema.createTable('webhook_relay')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('position', position, (c) => c.notNull())
        .execute()
      await db.insertInto('webhook_relay').values({ id: 1, position: 0 }).execute()
    },
    async down (db: Kysely<any>) {
      await db.schema.dropTable('webhook_relay').execute()
      await db.schema.dropTable('webhook_delivery').execute()
      await db.schema.dropTable('webhook').execute()
    }
  }
}
