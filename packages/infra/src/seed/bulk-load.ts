import { sql, type Insertable, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'

/*
 * Loading many rows at once. Kept up row by row, the structures a load
 * does not need until it ends cost most of its time; built once after it,
 * little. Measured seeding 1,000,000 people (20 friends, 3 messages each) on
 * SQLite: the trigger-fed trigram index of names, 17 s row by row, 2 s
 * rebuilt; the friend_id index of the 20M friendship rows, most of their
 * 200 s row by row, about 20 s sorted and built at the end.
 */

// Under both databases' limits on bound parameters (SQLite 32,766,
// PostgreSQL 65,535) for the widest table, person, with 12 columns.
const ROWS_PER_INSERT = 500

type Db = Kysely<Database>

/**
 * A multi-row INSERT for `rows` rows of `columns`, compiled once: each call
 * binds its values, row after row. (Kysely would build and compile the
 * statement anew for every chunk.)
 */
const compiledInsert = (db: Db, table: keyof Database, columns: readonly string[], rows: number) => {
  let position = 0
  const tuple = () => sql`(${sql.join(columns.map(() => position++))})`
  const compiled = sql`insert into ${sql.table(table)} (${sql.join(columns.map((column) => sql.ref(column)))}) values ${sql.join(Array.from({ length: rows }, tuple))}`.compile(db)
  // The placeholders were numbered in the order values are bound in.
  if (!compiled.parameters.every((value, index) => value === index)) throw new Error(`unexpected parameter order in ${compiled.sql}`)
  return async (values: unknown[]): Promise<void> => {
    await db.executeQuery({ ...compiled, parameters: values })
  }
}

/** Inserts every row (all with the same columns), many per statement; `progress` hears the count after each. */
export const bulkInsert = async <T extends keyof Database>(
  db: Db,
  table: T,
  rows: Iterable<Insertable<Database[T]>>,
  progress: (inserted: number) => void = () => {}
): Promise<number> => {
  let columns: string[] | undefined
  let insertFull: ((values: unknown[]) => Promise<void>) | undefined
  let values: unknown[] = []
  let count = 0
  for (const row of rows) {
    columns ??= Object.keys(row)
    for (const column of columns) values.push((row as Record<string, unknown>)[column])
    if (++count % ROWS_PER_INSERT !== 0) continue
    insertFull ??= compiledInsert(db, table, columns, ROWS_PER_INSERT)
    await insertFull(values)
    values = []
    progress(count)
  }
  if (columns !== undefined && values.length > 0) {
    await compiledInsert(db, table, columns, values.length / columns.length)(values)
    progress(count)
  }
  return count
}

interface Definition { name: string, kind: 'index' | 'trigger', definition: string }

/** The table's indexes (and triggers) that a load can drop and rebuild: not those behind its keys. */
const definitionsOf = async (db: Db, dialect: Dialect, table: keyof Database): Promise<Definition[]> => {
  if (dialect === 'sqlite') {
    // Automatic indexes (primary key, unique) have no SQL of their own.
    return (await sql<Definition>`select name, type as kind, sql as definition from sqlite_master
      where tbl_name = ${table} and type in ('index', 'trigger') and sql is not null`.execute(db)).rows
  }
  return (await sql<Definition>`select indexname as name, 'index' as kind, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = ${table}
      and indexname not in (select conname from pg_constraint where conrelid = ${table}::regclass)`.execute(db)).rows
}

/**
 * Drops the table's secondary indexes, and on SQLite the triggers that feed
 * its full-text indexes, for the length of a load; the function returned
 * creates them again from their own definitions and rebuilds those full-text
 * indexes, each in one pass. Run both inside the load's transaction.
 */
export const setAsideIndexes = async (db: Db, dialect: Dialect, table: keyof Database): Promise<() => Promise<void>> => {
  // External-content FTS5 tables over this table, fed by its triggers.
  const fullText = dialect === 'sqlite'
    ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table'
        and sql like '%using fts5(%' and sql like ${`%content='${table}'%`}`.execute(db)).rows
    : []
  // Only the triggers that feed those: any other trigger keeps doing its work during the load.
  const definitions = (await definitionsOf(db, dialect, table)).filter(({ kind, definition }) =>
    kind === 'index' || fullText.some(({ name }) => definition.includes(name)))
  for (const { name, kind } of definitions) await sql`drop ${sql.raw(kind)} ${sql.ref(name)}`.execute(db)
  return async () => {
    for (const { definition } of definitions) await sql.raw(definition).execute(db)
    for (const { name } of fullText) await sql`insert into ${sql.table(name)} (${sql.ref(name)}) values ('rebuild')`.execute(db)
  }
}
