import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * event: every change, recorded in the transaction that makes it (the
 * transactional outbox, docs/API.md "Events"). `position` orders the log in
 * commit order: a transaction numbers its events as its last statement,
 * taking event_sequence's one row, whose lock it holds to its commit, so a
 * number handed out later is never committed earlier (event-log.ts).
 *
 * The primary key serves the readers (position > cursor); type and subject
 * filters have (type, position) and (subject, position). Pruning deletes
 * the oldest positions, a prefix of the key, so it needs no index on time.
 *
 * event_sequence: the last position given, and the last one pruned (a
 * cursor before it has missed events: 410).
 */
export const eventLog = (dialect: Dialect): Migration => {
  const timestamp = dialect === 'postgres' ? 'timestamptz' : 'text'
  const position = dialect === 'postgres' ? 'bigint' : 'integer'
  return {
    async up (db: Kysely<any>) {
      await db.schema.createTable('event')
        .addColumn('position', position, (c) => c.primaryKey())
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('type', 'text', (c) => c.notNull())
        .addColumn('source', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('time', timestamp, (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'text', (c) => c.notNull())
        .addColumn('data', 'text', (c) => c.notNull())
        .execute()
      await db.schema.createIndex('event_type_position').on('event').columns(['type', 'position']).execute()
      await db.schema.createIndex('event_subject_position').on('event').columns(['subject', 'position']).execute()
      await db.schema.createTable('event_sequence')
        .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
        .addColumn('last', position, (c) => c.notNull())
        .addColumn('pruned_through', position, (c) => c.notNull())
        .execute()
      await db.insertInto('event_sequence').values({ id: 1, last: 0, pruned_through: 0 }).execute()
    },
    async down (db: Kysely<any>) {
      await db.schema.dropTable('event_sequence').execute()
      await db.schema.dropTable('event').execute()
    }
  }
}
