import type { SqliteConnection } from '../sqlite/better-sqlite3.js'
import { chunks, holdingLast, PERSON_COLUMNS, type SeedPlan } from './seed-plan.js'

/*
 * The SQLite seed, on the connection itself: a million people with twenty
 * friends each is 21M rows, and per row every layer counts. Measured on the
 * 2-core machine (1M people, 20 friends, 3 messages: 22 s, the file
 * 1.33 GB), the recipe:
 * - people in 500-row inserts through one prepared statement, keys given
 *   (contiguous, so the friendships can be computed from them);
 * - friendships and messages computed in SQL (`INSERT … SELECT` over the
 *   people just loaded), in person order so each b-tree grows at its end;
 * - foreign keys off for the load: every key is built from a row loaded
 *   before it, and checking each friendship's took its load from 1.9 s to
 *   3.0–3.4 s at 300,000 people;
 * - the full-text index of names rebuilt once at the end, not row by row;
 * - a large page cache for the length of the seed; WAL as always.
 */

// Under SQLite's limit on bound parameters (32,766) at 13 columns.
const ROWS_PER_INSERT = 500
// People per INSERT … SELECT of friendships or messages: small enough for a
// steady progress bar, large enough that statements cost nothing.
const PEOPLE_PER_STATEMENT = 20_000
// The page cache for the seed (KiB): the b-trees being appended to, and the
// sort that rebuilds the name index, stay in memory.
const SEED_CACHE_KIB = 1024 * 1024

/** Waits for the handle's group commit to end, so the seed's transactions are its own. */
const idle = async (connection: SqliteConnection): Promise<void> => {
  for (let turns = 0; connection.inTransaction; turns++) {
    if (turns > 1000) throw new Error('the database stays in a transaction: seed through a handle nothing else is using')
    await new Promise((resolve) => setImmediate(resolve))
  }
}

/** One table's load in one transaction: stopped anywhere, it leaves the table as it was. */
const transaction = async (connection: SqliteConnection, body: () => Promise<void>): Promise<void> => {
  connection.exec('begin immediate')
  try {
    await body()
    connection.exec('commit')
  } catch (error) {
    if (connection.inTransaction) connection.exec('rollback')
    throw error
  }
}

/** Whole numbers as a one-column VALUES list. */
const valuesOf = (numbers: readonly number[]): string => {
  if (!numbers.every(Number.isSafeInteger)) throw new Error('whole numbers only')
  return `values ${numbers.map((value) => `(${value})`).join(', ')}`
}

/** better-sqlite3 binds every number as a REAL; keys and counters must stay integers ('message 7', not 'message 7.0'). */
const integers = (values: Record<string, number>): Record<string, bigint> =>
  Object.fromEntries(Object.entries(values).map(([name, value]) => [name, BigInt(value)]))

/** Lets the event loop turn between statements (signals, timers, a progress bar). */
const breathe = async (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * Drops the triggers that copy new rows of `table` into its external-content
 * FTS5 indexes; the function returned creates them again and rebuilds those
 * indexes from the table in one pass each, then merges each into one segment.
 *
 * The merge is for the writes that follow: after a rebuild the index is a
 * few large segments, and the merges of the first thousands of new names
 * reach them again and again; one segment is reached far less often. At 1M
 * people, 30,000 inserts of 20 a commit with ids in order (as the service
 * makes them) took 95 µs each before, 53 after (39 and 35 at 100k); the
 * merge takes 0.6 s.
 */
const setAsideFullTextUpkeep = (connection: SqliteConnection, table: string): (() => void) => {
  const indexes = connection.prepare(`select name from sqlite_master where type = 'table'
    and sql like '%using fts5(%' and sql like ?`).pluck().all(`%content='${table}'%`) as string[]
  const triggers = (connection.prepare('select name, sql from sqlite_master where type = \'trigger\' and tbl_name = ?')
    .all(table) as Array<{ name: string, sql: string }>)
    .filter(({ sql }) => /\bafter\s+insert\b/i.test(sql) && indexes.some((name) => sql.includes(name)))
  for (const { name } of triggers) connection.exec(`drop trigger "${name}"`)
  return () => {
    for (const { sql } of triggers) connection.exec(sql)
    for (const name of indexes) {
      connection.exec(`insert into "${name}" ("${name}") values ('rebuild')`)
      connection.exec(`insert into "${name}" ("${name}") values ('optimize')`)
    }
  }
}

/** Loads the people after those already there; returns the key of the first. */
const loadPeople = async (connection: SqliteConnection, plan: SeedPlan): Promise<number> => {
  const base = connection.prepare('select coalesce(max(pk), 0) + 1 from person').pluck().get() as number
  const tuple = `(${PERSON_COLUMNS.map(() => '?').join(', ')})`
  const insertOf = (rows: number) => connection.prepare(`insert into person (${PERSON_COLUMNS.join(', ')}) values ${Array.from({ length: rows }, () => tuple).join(', ')}`)
  const insertFull = insertOf(ROWS_PER_INSERT)
  const restoreFullText = setAsideFullTextUpkeep(connection, 'person')
  const values: unknown[] = []
  let loaded = 0
  for (const person of plan.persons()) {
    values.push(base + loaded, person.id, person.name, person.name_lower, person.age, person.email, person.has_address,
      person.street, person.city, person.country, person.created_at, person.updated_at, person.version)
    if (++loaded % ROWS_PER_INSERT !== 0) continue
    insertFull.run(values)
    values.length = 0
    plan.report('people', loaded, plan.people)
    if (loaded % PEOPLE_PER_STATEMENT === 0) await breathe()
  }
  if (values.length > 0) {
    insertOf(values.length / PERSON_COLUMNS.length).run(values)
    plan.report('people', loaded, plan.people)
  }
  restoreFullText()
  return base
}

/** Every person's friends, both ways, computed from the pattern by SQL: no row crosses into JavaScript. */
const loadFriendships = async (connection: SqliteConnection, plan: SeedPlan, base: number): Promise<void> => {
  const n = plan.people
  const { deltas, pairNeighbours, friendships } = plan.pattern
  // The offsets inline, as a VALUES list: a quarter less time than json_each(?)
  // over 20M rows. They are whole numbers of our own making.
  const byOffset = deltas.length === 0
    ? undefined
    : connection.prepare(`insert into friendship (person_pk, friend_pk)
      select p.pk, @base + (p.pk - @base + d.column1) % @n from person p cross join (${valuesOf(deltas)}) d
      where p.pk >= @from and p.pk < @to`)
  // The last person of an odd number has no neighbour to pair with.
  const byPair = connection.prepare(`insert into friendship (person_pk, friend_pk)
    select pk, case when (pk - @base) % 2 = 0 then pk + 1 else pk - 1 end from person
    where pk >= @from and pk < @to and pk - @base < @n - 1`)
  let rows = 0
  for (const { from, to } of chunks(n, PEOPLE_PER_STATEMENT)) {
    const range = integers({ base, n, from: base + from, to: base + to })
    if (byOffset !== undefined) rows += byOffset.run(range).changes
    if (pairNeighbours) rows += byPair.run(range).changes
    plan.report('friendships', rows / 2, friendships)
    await breathe()
  }
  if (rows / 2 !== friendships) throw new Error(`seeded ${rows / 2} friendships where ${friendships} were planned`)
}

/**
 * Messages, also computed by SQL. Their ids are UUIDv7: the seed's
 * millisecond, then a 42-bit counter over rand_a and the top of rand_b
 * (RFC 9562, method 1), so they increase in insertion order, then 32 random
 * bits.
 */
const loadMessages = async (connection: SqliteConnection, plan: SeedPlan, base: number): Promise<void> => {
  const total = plan.people * plan.messagesPerPerson
  if (total === 0) return
  // The id's first 14 characters are the millisecond's, the same for all.
  const time = plan.now.toString(16).padStart(12, '0')
  const insert = connection.prepare(`insert into message (id, person_pk, text, sender_id, sent_at)
    select @time || printf('%03x-%04x-%04x%08x', (i >> 30) & 4095, 32768 | ((i >> 16) & 16383), i & 65535, random() & 4294967295),
      pk, 'Synthetic message ' || i, 'seed',
      strftime('%Y-%m-%dT%H:%M:%S', (@first + i) / 1000, 'unixepoch') || printf('.%03dZ', (@first + i) % 1000)
    from (select p.pk, (p.pk - @base) * @each + k.column1 as i
      from person p cross join (${valuesOf(Array.from({ length: plan.messagesPerPerson }, (_, k) => k))}) k
      where p.pk >= @from and p.pk < @to)`)
  let done = 0
  for (const { from, to } of chunks(plan.people, PEOPLE_PER_STATEMENT)) {
    done += insert.run({
      time: `${time.slice(0, 8)}-${time.slice(8)}-7`,
      ...integers({ first: plan.now - total, base, each: plan.messagesPerPerson, from: base + from, to: base + to })
    }).changes
    plan.report('messages', done, total)
    await breathe()
  }
}

/** Seeds through the SQLite connection under a handle; see the recipe above. */
export const seedSqlite = async (connection: SqliteConnection, plan: SeedPlan): Promise<void> => {
  await idle(connection)
  const foreignKeys = connection.pragma('foreign_keys', { simple: true }) as number
  const cacheSize = connection.pragma('cache_size', { simple: true }) as number
  // foreign_keys only takes effect outside a transaction.
  connection.pragma('foreign_keys = off')
  connection.pragma(`cache_size = -${SEED_CACHE_KIB}`)
  try {
    const table = async (load: (plan: SeedPlan) => Promise<void>): Promise<void> => {
      const held = holdingLast(plan.report)
      await transaction(connection, async () => {
        await load({ ...plan, report: held.report })
        held.done()
      })
    }
    let base = 0
    await table(async (plan) => { base = await loadPeople(connection, plan) })
    await table(async (plan) => { await loadFriendships(connection, plan, base) })
    await table(async (plan) => { await loadMessages(connection, plan, base) })
  } finally {
    connection.pragma(`foreign_keys = ${foreignKeys}`)
    connection.pragma(`cache_size = ${cacheSize}`)
  }
}
