import type { Compilable, CompiledQuery, Kysely, RawBuilder } from 'kysely'
import type { Database } from './database.js'

/*
 * Kysely builds and compiles a query's SQL on every call, though the hot
 * reads always produce the same SQL with other values: that was a tenth of
 * the CPU time of GET /person/<id>. A prepared query is built and compiled
 * once, with named placeholders where the values go; each call only binds
 * its values. (The driver then reuses the database's prepared statement.)
 */

const PLACEHOLDER = '\u0000prepared-query-parameter:'

/** A read statement's rows at once, or undefined when it must wait its turn (see `readDirectly`). */
export type ReadNow = (sql: string, parameters: unknown[]) => unknown[] | undefined

const directReaders = new WeakMap<Kysely<Database>, ReadNow>()

/**
 * Lets `db`'s prepared reads skip Kysely's executor when the driver can
 * answer at once (SQLite, whose statements run synchronously): its
 * connection round trip was about a tenth of what GET /person/<id> allocates.
 * Kysely adds nothing to these queries' rows (no plugins), so they are the
 * same either way.
 */
export const readDirectly = (db: Kysely<Database>, readNow: ReadNow): void => {
  directReaders.set(db, readNow)
}

/**
 * Reads a compiled query's rows: at once where `db` reads directly
 * (`readDirectly`) and nothing is ahead of the query, through Kysely
 * otherwise. `prepareQuery` reads with it; so does SQL made at run time and
 * kept by its maker (the GraphQL selections' SQL).
 */
export const rowsReader = (db: Kysely<Database>) => {
  const readNow = directReaders.get(db)
  return async <Row>(compiled: CompiledQuery): Promise<Row[]> =>
    (readNow?.(compiled.sql, compiled.parameters as unknown[]) as Row[] | undefined) ?? (await db.executeQuery<Row>(compiled)).rows
}

/** Stands for a value bound at each call of a prepared query, by name. */
export const param = <T>(name: string): T => `${PLACEHOLDER}${name}` as T

/**
 * Compiles `query` once. Every value in it must be a `param()`: a literal
 * value would be bound as compiled, whatever the call passes.
 */
export const prepareQuery = <Row, Params extends Record<string, unknown>>(db: Kysely<Database>, query: Compilable<Row> | (() => Compilable<Row>)) => {
  // Compiled at the first call: a repository made for one transaction (a
  // unit of work's) compiles only the queries that transaction runs.
  let prepared: { compiled: CompiledQuery, names: string[] } | undefined
  const prepare = () => {
    const compiled = (typeof query === 'function' ? query() : query).compile()
    const names = compiled.parameters.map((value) => {
      if (typeof value !== 'string' || !value.startsWith(PLACEHOLDER)) throw new Error(`a prepared query takes its values from param(), not ${String(value)}: ${compiled.sql}`)
      return value.slice(PLACEHOLDER.length)
    })
    return { compiled, names }
  }
  const read = rowsReader(db)
  return async (params: Params): Promise<Row[]> => {
    const { compiled, names } = (prepared ??= prepare())
    return read<Row>({ ...compiled, parameters: names.map((name) => params[name]) })
  }
}

/** `prepareQuery` for hand-written SQL (`sql` template), whose values are all `param()`s. */
export const prepareSql = <Row, Params extends Record<string, unknown>>(db: Kysely<Database>, query: RawBuilder<Row> | (() => RawBuilder<Row>)) =>
  prepareQuery<Row, Params>(db, { compile: () => (typeof query === 'function' ? query() : query).compile(db) })
