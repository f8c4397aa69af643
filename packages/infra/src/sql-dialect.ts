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
  return sql<SqlBool>`person.pk in (select rowid from person_name where person_name match ${phrase}) and ${exact}`
}
