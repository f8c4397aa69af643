import { foldName } from '@people-service/domain'
import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely'
import type { Dialect } from './database.js'

/*
 * The SQL that differs between SQLite and PostgreSQL, in one place.
 */

const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * Case-insensitive substring match on the name, against the value
 * nameNeedle() binds: person.name_lower holds the name folded by the service
 * (foldName), so the needle is folded the same way and no database's own
 * case tables are involved (see the migration 0003-person-name-lower).
 * PostgreSQL's pg_trgm index serves the LIKE; on SQLite, instr() keeps the
 * exact matches of what the FTS5 index found, or of a walk (name-search.ts).
 */
export const nameMatches = (dialect: Dialect, needle: string): Expression<SqlBool> =>
  dialect === 'postgres' ? sql<SqlBool>`person.name_lower like ${needle}` : sql<SqlBool>`instr(person.name_lower, ${needle}) > 0`

/** The value nameMatches() compares with, for a needle as the caller wrote it. */
export const nameNeedle = (dialect: Dialect, needle: string): string => {
  const folded = foldName(needle)
  return dialect === 'postgres' ? `%${escapeLike(folded)}%` : folded
}

/** Trigrams of a needle's FTS5 query: enough to narrow the candidates, few enough to read quickly. */
const QUERY_TRIGRAMS = 16

/**
 * SQLite's FTS5 query for the names that may hold a needle: those holding
 * its distinct trigrams (at most QUERY_TRIGRAMS, spread over the needle),
 * each quoted, so that % and _ are taken as they are. A superset: the LIKE
 * that follows keeps the names that hold the needle itself. Not the whole
 * needle as a phrase: FTS5 checks a phrase's positions in every name that
 * holds all its trigrams, and a needle of 200 characters repeating `bar`
 * took 277 ms over names holding bar, arb and rba without the phrase.
 */
export const trigramQuery = (needle: string): string => {
  const characters = [...foldName(needle)]
  const trigrams = [...new Set(characters.slice(2).map((_, i) => characters.slice(i, i + 3).join('')))]
  const picked = trigrams.length <= QUERY_TRIGRAMS
    ? trigrams
    : Array.from({ length: QUERY_TRIGRAMS }, (_, i) => trigrams[Math.floor(i * trigrams.length / QUERY_TRIGRAMS)]!)
  return picked.map((trigram) => `"${trigram.replaceAll('"', '""')}"`).join(' AND ')
}

/**
 * The person table as `alias`, for reading friends' keys, ids and names
 * only. On SQLite through the (pk, id, name) index of the migration
 * 0009-person-summary-index: its planner reads a row by integer key
 * from the table whatever other index holds the columns, so the index is named.
 */
export const personSummaries = (dialect: Dialect, alias: string): string =>
  dialect === 'sqlite' ? `person ${alias} indexed by person_summary` : `person ${alias}`

/*
 * Batch reads bind their ids as ONE parameter, so a statement is compiled
 * and prepared once whatever the number of ids (an `IN (?, ?, …)` list is
 * new SQL for every size): a JSON text array read by json_each() on SQLite,
 * a text[] on PostgreSQL.
 */

/** The ids as the one parameter `idsIn` expects. */
export const boundIds = (dialect: Dialect, ids: readonly string[]): unknown => (dialect === 'postgres' ? [...ids] : JSON.stringify(ids))

/** `column` is one of the ids bound by `boundIds` in `ids`. */
export const idsIn = (dialect: Dialect, column: string, ids: unknown): Expression<SqlBool> => (dialect === 'postgres'
  ? sql<SqlBool>`${sql.ref(column)} = any(${ids}::text[])`
  : sql<SqlBool>`${sql.ref(column)} in (select value from json_each(${ids}))`)

export interface SummariesJsonRow {
  json: string
  lastId: string | null
  more: number | boolean
}

/**
 * The (id, name) rows `page` selects, ordered by id, as one row: the JSON
 * array of them, byte for byte what JSON.stringify gives for the same
 * objects (SQLite's json_object; on PostgreSQL to_json of each string,
 * joined, since json_build_object adds spaces), the last id, and whether
 * `after(lastId)` finds anyone. (Kysely puts a query it embeds in
 * parentheses of its own.)
 */
export const summariesJson = (
  dialect: Dialect,
  page: Expression<unknown>,
  after: (lastId: Expression<string>) => Expression<unknown>
): RawBuilder<SummariesJsonRow> => {
  const summary = dialect === 'postgres'
    ? sql`select coalesce('[' || string_agg('{"id":' || to_json(page.id)::text || ',"name":' || to_json(page.name)::text || '}', ',' order by page.id) || ']', '[]') as json,
        max(page.id) as "lastId" from ${page} page`
    // SQLite aggregates the rows in the order the page (a co-routine with its
    // own ORDER BY) yields them: an ORDER BY in the aggregate would only sort
    // them again in a temporary b-tree (68 → 41 µs a page of 100 at 100k).
    : sql`select json_group_array(json_object('id', page.id, 'name', page.name)) as json,
        max(page.id) as "lastId" from ${page} page`
  return sql<SummariesJsonRow>`select summary.json, summary."lastId", exists ${after(sql.ref('summary.lastId'))} as more from (${summary}) summary`
}
