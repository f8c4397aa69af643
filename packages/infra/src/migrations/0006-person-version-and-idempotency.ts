import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * person.version: 1 when created, one more on every change. The ETag of a
 * person and the condition of every write (UPDATE … WHERE version = ?), read
 * with the row it belongs to, so GET /person/<id> costs no extra query.
 *
 * idempotency_key: one row per (caller, Idempotency-Key) for 24 hours, in
 * the database so every instance sees it and a restart keeps it. The
 * primary key serves every lookup; expires_at has its own index, so expired
 * rows are found and deleted a batch at a time without scanning the table.
 */
export const personVersionAndIdempotency = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  return {
    async up (db: Kysely<any>) {
      await db.schema.alterTable('person').addColumn('version', 'integer', (c) => c.notNull().defaultTo(1)).execute()
      await db.schema.createTable('idempotency_key')
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('fingerprint', 'text', (c) => c.notNull())
        .addColumn('token', 'text', (c) => c.notNull())
        .addColumn('response', 'text')
        .addColumn('locked_until', timestamp, (c) => c.notNull())
        .addColumn('expires_at', timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('idempotency_key_pk', ['scope', 'key'])
        .$call((table) => (dialect === 'sqlite' ? table.modifyEnd(sql`without rowid`) : table))
        .execute()
      await db.schema.createIndex('idempotency_key_expires_at').on('idempotency_key').column('expires_at').execute()
    },
    async down (db: Kysely<any>) {
      await db.schema.dropTable('idempotency_key').execute()
      await db.schema.alterTable('person').dropColumn('version').execute()
    }
  }
}
