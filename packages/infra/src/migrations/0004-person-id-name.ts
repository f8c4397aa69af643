import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * A friend list names each friend: one (id, name) lookup per friend, 20 per
 * list and a thousand per GraphQL page of people with their friends. Through
 * the primary key that is two b-trees on SQLite (the key's index, then the
 * row) and an index plus a heap page on PostgreSQL, each a random read once
 * the table outgrows the cache. This index answers it alone, from pages that
 * hold several times as many people as the table's.
 */
export const personIdName = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    if (dialect === 'postgres') await sql`create index person_id_name on person (id) include (name)`.execute(db)
    else await db.schema.createIndex('person_id_name').on('person').columns(['id', 'name']).execute()
  },
  async down (db: Kysely<any>) {
    await db.schema.dropIndex('person_id_name').execute()
  }
})
