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
  // SQLite's lower() and LIKE fold ASCII only ('É' is not 'é'), so the exact
  // test uses lower_unicode (open-sqlite.ts), which folds every script as
  // PostgreSQL's lower() does. The trigram index is asked with a phrase
  // MATCH, which folds case the way the index does and takes % and _ as
  // they are (its LIKE would re-check with ASCII-only folding and drop 'Élodie'
  // for 'élodie'). Needles shorter than a trigram cannot use the index and
  // scan instead.
  const exact = sql<SqlBool>`instr(lower_unicode(person.name), ${needle.toLowerCase()}) > 0`
  if ([...needle].length < 3) return exact
  const phrase = `"${needle.replaceAll('"', '""')}"`
  return sql<SqlBool>`person.rowid in (select rowid from person_name where person_name match ${phrase}) and ${exact}`
}
