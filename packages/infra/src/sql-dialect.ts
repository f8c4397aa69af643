import { sql, type Expression, type SqlBool } from 'kysely'
import type { Dialect } from './database.js'

/*
 * The SQL that differs between SQLite and PostgreSQL, in one place.
 */

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Case-insensitive substring match on the name: person.name_lower holds the
 * name lower-cased by the service, so the needle is lower-cased the same way
 * here and no database's own case tables are involved (see the migration
 * 2026-11-23-person-name-lower). Served by each dialect's trigram index.
 */
export const nameContains = (dialect: Dialect, needle: string): Expression<SqlBool> => {
  const lower = needle.toLowerCase()
  if (dialect === 'postgres') {
    return sql<SqlBool>`person.name_lower like ${`%${escapeLike(lower)}%`}`
  }
  // The FTS5 index is asked with a phrase MATCH, which takes % and _ as they
  // are; instr() then keeps exact substring matches. Needles shorter than a
  // trigram cannot use the index and scan instead.
  const exact = sql<SqlBool>`instr(person.name_lower, ${lower}) > 0`
  if ([...lower].length < 3) return exact
  const phrase = `"${lower.replaceAll('"', '""')}"`
  return sql<SqlBool>`person.rowid in (select rowid from person_name where person_name match ${phrase}) and ${exact}`
}

/**
 * People as a join reads them for a friend's name: (id, name) only. On
 * SQLite from the (id, name) index alone (migration 2026-11-24-person-id-name):
 * without statistics its planner takes the primary key's index and then reads
 * each friend's row, two b-trees instead of one. The subquery is flattened
 * into the join by both databases.
 */
export const personNames = (dialect: Dialect) =>
  (dialect === 'sqlite'
    ? sql<{ id: string, name: string }>`(select id, name from person indexed by person_id_name)`
    : sql<{ id: string, name: string }>`(select id, name from person)`).as('person')
