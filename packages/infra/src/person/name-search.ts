import type { ListPeopleQuery, PersonSummary } from '@people-service/domain'
import { sql, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { param, prepareQuery, prepareSql } from '../prepared-query.js'
import { nameMatches, nameNeedle, trigramQuery } from '../sql-dialect.js'

/*
 * A name search answers in id order, like every list of people, and no
 * index holds names in that order. A trigram index finds the names that
 * hold a needle of three characters or more (SQLite's FTS5 table
 * person_name, PostgreSQL's pg_trgm index): quick while few names match.
 * When many do, SQLite reads every match and sorts them by id ("son" at a
 * million people: 150,000 names, 103 ms), and a needle of one or two
 * characters no index serves ("zq": every name, 141–177 ms). On SQLite all
 * of that ran on the event loop, in one statement, for one request.
 *
 * Those searches walk the people in id order instead, RANGE_ROWS at a
 * time, keeping the matches, until the page is full or the people end. A
 * common needle fills its page in a range or two; a rare one reads every
 * name, but one range at a time: between two ranges the caller takes its
 * turn and pays for the next (ListPeopleQuery.beforeNextRange).
 */

/** People one range of a walk reads: at most 3.5 ms on SQLite at a million people (2-core AMD EPYC). */
export const RANGE_ROWS = 20_000

/**
 * Candidates (names holding the needle's trigrams, sql-dialect.ts'
 * trigramQuery) up to which SQLite reads a needle's matches through its
 * trigram index: 2 ms for 4,000 at a million people, 4.8 ms for 5,500.
 */
export const INDEXED_MATCHES_MAX = 5_000

/** At most `limit` people whose names hold `nameContains`, after `afterId`, in id order. */
export type NameSearch = (query: ListPeopleQuery & { nameContains: string }) => Promise<PersonSummary[]>

/** Between two ranges when the caller gives no beforeNextRange: other callbacks run first. */
const yieldToEventLoop = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

export interface NameSearchSizes {
  rangeRows: number
  indexedMatchesMax: number
}

export const nameSearch = (db: Kysely<Database>, dialect: Dialect,
  { rangeRows, indexedMatchesMax }: NameSearchSizes = { rangeRows: RANGE_ROWS, indexedMatchesMax: INDEXED_MATCHES_MAX }): NameSearch => {
  const page = db.selectFrom('person').select(['person.id', 'person.name'])
    .where('person.id', '>', param<string>('afterId')).where(nameMatches(dialect, param<string>('needle')))
  type PageParams = { afterId: string, needle: string, limit: number }
  const firstMatches = prepareQuery<PersonSummary, PageParams>(db, page.orderBy('person.id').limit(param<number>('limit')))

  // The walk: where the next range ends, and the matches up to there.
  const rangeEnd = prepareQuery<{ id: string }, { afterId: string, skip: number }>(db,
    db.selectFrom('person').select('person.id').where('person.id', '>', param<string>('afterId'))
      .orderBy('person.id').limit(sql.lit(1)).offset(param<number>('skip')))
  const inRange = prepareQuery<PersonSummary, PageParams & { lastId: string }>(db,
    page.where('person.id', '<=', param<string>('lastId')).orderBy('person.id').limit(param<number>('limit')))

  const walk: NameSearch = async ({ limit, afterId = '', nameContains, beforeNextRange = yieldToEventLoop }) => {
    const needle = nameNeedle(dialect, nameContains)
    const found: PersonSummary[] = []
    for (let after = afterId; ;) {
      const [end] = await rangeEnd({ afterId: after, skip: rangeRows - 1 })
      const want = { afterId: after, needle, limit: limit - found.length }
      found.push(...await (end === undefined ? firstMatches(want) : inRange({ ...want, lastId: end.id })))
      if (end === undefined || found.length >= limit) return found
      after = end.id
      await beforeNextRange()
    }
  }

  // Through the index. PostgreSQL's pg_trgm index serves the LIKE itself,
  // and its planner answers off the event loop however many names match.
  // SQLite's FTS5 index drives the statement (its candidates, kept by the
  // LIKE, then sorted by id, whatever the id bound) while it holds fewer
  // than indexedMatchesMax candidates, counted first (0.1–1 ms at a million
  // people).
  const throughIndex: (params: PageParams & { trigrams: string }) => Promise<PersonSummary[]> = dialect === 'postgres'
    ? firstMatches
    : prepareQuery(db, page.where(sql<boolean>`person.pk in (select rowid from person_name where person_name match ${param('trigrams')})`)
      .orderBy('person.id').limit(param<number>('limit')))
  const ftsCandidates = dialect === 'sqlite'
    ? prepareSql<{ candidates: number }, { trigrams: string, most: number }>(db,
      sql`select count(*) as candidates from (select 1 from person_name where person_name match ${param('trigrams')} limit ${param('most')})`)
    : undefined
  const indexServes = async (trigrams: string): Promise<boolean> =>
    ftsCandidates === undefined || ((await ftsCandidates({ trigrams, most: indexedMatchesMax }))[0]?.candidates ?? 0) < indexedMatchesMax

  return async (query) => {
    if ([...query.nameContains].length < 3) return walk(query)
    const trigrams = trigramQuery(query.nameContains)
    if (!await indexServes(trigrams)) return walk(query)
    return throughIndex({ afterId: query.afterId ?? '', needle: nameNeedle(dialect, query.nameContains), trigrams, limit: query.limit })
  }
}
