import { sql, type Expression, type SqlBool } from 'kysely'
import type { Dialect } from './database.js'

/*
 * The SQL that differs between SQLite and PostgreSQL, in one place.
 */

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Case-insensitive substring match on person.name, served by the trigram
 * index of each dialect (see the initial migration).
 */
export const nameContains = (dialect: Dialect, needle: string): Expression<SqlBool> => {
  if (dialect === 'postgres') {
    return sql<SqlBool>`lower(person.name) like lower(${`%${escapeLike(needle)}%`})`
  }
  // FTS5's trigram LIKE has no ESCAPE clause: wildcards in the needle widen
  // the candidate set, and instr() keeps only exact substring matches.
  // Needles shorter than a trigram cannot use the index and scan instead.
  const exact = sql<SqlBool>`instr(lower(person.name), lower(${needle})) > 0`
  if ([...needle].length < 3) return exact
  return sql<SqlBool>`person.rowid in (select rowid from person_name where person_name.name like ${`%${needle}%`}) and ${exact}`
}
