import type { Compilable, Kysely, RawBuilder } from 'kysely'
import type { Database } from './database.js'

/*
 * Kysely builds and compiles a query's SQL on every call, though the hot
 * reads always produce the same SQL with other values: that was a tenth of
 * the CPU time of GET /person/<id>. A prepared query is built and compiled
 * once, with named placeholders where the values go; each call only binds
 * its values. (The driver then reuses the database's prepared statement.)
 */

const PLACEHOLDER = '\u0000prepared-query-parameter:'

/** Stands for a value bound at each call of a prepared query, by name. */
export const param = <T>(name: string): T => `${PLACEHOLDER}${name}` as T

/**
 * Compiles `query` once. Every value in it must be a `param()`: a literal
 * value would be bound as compiled, whatever the call passes.
 */
export const prepareQuery = <Row, Params extends Record<string, unknown>>(db: Kysely<Database>, query: Compilable<Row>) => {
  const compiled = query.compile()
  const names = compiled.parameters.map((value) => {
    if (typeof value !== 'string' || !value.startsWith(PLACEHOLDER)) throw new Error(`a prepared query takes its values from param(), not ${String(value)}: ${compiled.sql}`)
    return value.slice(PLACEHOLDER.length)
  })
  return async (params: Params): Promise<Row[]> =>
    (await db.executeQuery<Row>({ ...compiled, parameters: names.map((name) => params[name]) })).rows
}

/** `prepareQuery` for hand-written SQL (`sql` template), whose values are all `param()`s. */
export const prepareSql = <Row, Params extends Record<string, unknown>>(db: Kysely<Database>, query: RawBuilder<Row>) =>
  prepareQuery<Row, Params>(db, { compile: () => query.compile(db) })
