import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * A page of people (`GET /people`, GraphQL `people`) is ids and names in id
 * order. Through the unique index on id alone, each of its 100 rows costs a
 * second b-tree descent into the table for the name; an index that holds
 * both makes a page one range of one index (SQLite at 100k people: 88 →
 * 71–79 µs a page). Friend lists do not need it: they reach a friend's row
 * by its key. PostgreSQL's unique index can carry the name itself (INCLUDE),
 * so it replaces person_id_unique there; SQLite keeps that one for the
 * uniqueness of ids, and this one is about 70 MB more at a million people.
 */
export const personPageIndex = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    if (dialect === 'postgres') {
      await sql`create unique index person_page on person (id) include (name)`.execute(db)
      await sql`drop index person_id_unique`.execute(db)
    } else {
      await db.schema.createIndex('person_page').on('person').columns(['id', 'name']).execute()
    }
  },
  async down (db: Kysely<any>) {
    if (dialect === 'postgres') await sql`create unique index person_id_unique on person (id)`.execute(db)
    await db.schema.dropIndex('person_page').execute()
  }
})
