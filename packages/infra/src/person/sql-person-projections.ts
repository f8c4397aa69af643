import type { PersonProjections, PersonSelection } from '@people-service/domain'
import { CompiledQuery, type Kysely } from 'kysely'
import type { Database, Dialect } from '../database.js'
import { translateErrors } from '../database-errors.js'
import { rowsReader } from '../prepared-query.js'
import { peoplePageSql, personByIdSql } from './projection-sql.js'

/** SQLite hands the JSON over as text; PostgreSQL's driver parses a json column. */
type JsonColumn = string | object

interface Statements {
  byId: string
  firstPage: string
  pageAfter: string
}

/**
 * People as JSON built by the database (projection-sql.ts): one statement
 * per lookup or page, whatever the depth of the selection. The SQL of a
 * selection is made once and kept by the selection's identity; the SQLite
 * driver keeps the prepared statement by its text.
 */
export const sqlPersonProjections = (db: Kysely<Database>, dialect: Dialect): PersonProjections => {
  const compiled = new WeakMap<PersonSelection, Statements>()
  const statementsOf = (selection: PersonSelection): Statements => {
    let statements = compiled.get(selection)
    if (statements === undefined) {
      statements = {
        byId: personByIdSql(dialect, selection),
        firstPage: peoplePageSql(dialect, selection, false),
        pageAfter: peoplePageSql(dialect, selection, true)
      }
      compiled.set(selection, statements)
    }
    return statements
  }
  // PostgreSQL's parsed value back to text: key order is the selection's, as
  // json_build_object wrote it, and the text compact, as JSON.stringify writes.
  const text = (json: JsonColumn): string => typeof json === 'string' ? json : JSON.stringify(json)
  const read = rowsReader(db)
  const rowsOf = async (query: string, parameters: readonly unknown[]): Promise<Array<{ json: JsonColumn }>> =>
    read<{ json: JsonColumn }>(CompiledQuery.raw(query, [...parameters]))

  return translateErrors({
    async findJson (id, selection) {
      const [row] = await rowsOf(statementsOf(selection).byId, [id])
      return row === undefined ? undefined : text(row.json)
    },
    async listJson ({ limit, afterId }, selection) {
      const statements = statementsOf(selection)
      const rows = afterId === undefined
        ? await rowsOf(statements.firstPage, [limit])
        : await rowsOf(statements.pageAfter, [afterId, limit])
      return `[${rows.map((row) => text(row.json)).join(',')}]`
    }
  })
}
