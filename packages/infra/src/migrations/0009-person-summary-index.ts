import { sql, type Kysely, type Migration } from 'kysely'
import type { Dialect } from '../database.js'

// Frozen once shipped, like every migration.

/*
 * A friend list is the ids and names of friends reached by their integer
 * keys: ten random rows of the person table, which at a million people is
 * 210 MB against a 32 MiB page cache, so nearly every friend was a page read
 * from the kernel. An index of (pk, id, name) holds just what a friend list
 * reads, a third of the table (71 MB at a million people, 7 MB at 100k).
 * SQLite reads a row by its integer key from the table whatever other index
 * exists, so the friend queries name this one (`INDEXED BY`, sql-dialect's
 * `personSummaries`), and so does a GraphQL selection of friends that reads
 * nothing else.
 *
 * PostgreSQL gets none: its friend lists are not in the bench, and an
 * index-only scan there depends on the visibility map, not on an index alone.
 */
export const personSummaryIndex = (dialect: Dialect): Migration => ({
  async up (db: Kysely<any>) {
    if (dialect === 'sqlite') await sql`create index person_summary on person (pk, id, name)`.execute(db)
  },
  async down (db: Kysely<any>) {
    if (dialect === 'sqlite') await sql`drop index person_summary`.execute(db)
  }
})
