import { createRequire } from 'node:module'
import type Binding from 'better-sqlite3'

const require = createRequire(import.meta.url)

const isModuleNotFound = (error: unknown): boolean =>
  error instanceof Error && 'code' in error && error.code === 'MODULE_NOT_FOUND'

/**
 * The SQLite binding for this runtime. better-sqlite3 13 binds through
 * Node-API 10 (Node 22.14 and later, 24). Up to 12 it wraps its objects in
 * a way Node 24 aborts on when the garbage collector frees a statement or a
 * database ("Assertion failed: (env) != nullptr"; 24.4, 24.12, 24.18 and
 * 24.21 tried): the server died seconds after it started on a large file.
 * A runtime without Node-API 10 (Node 20, on development machines that have
 * nothing newer) gets 12 from the dev dependencies, under the name
 * `better-sqlite3-12`; a production install on such a runtime stops here
 * and says why.
 */
const load = (): typeof Binding => {
  if (Number(process.versions.napi) >= 10) return require('better-sqlite3') as typeof Binding
  try {
    return require('better-sqlite3-12') as typeof Binding
  } catch (error) {
    if (!isModuleNotFound(error)) throw error
    throw new Error(`SQLite needs Node.js 22.14 or later (Node-API 10); this is Node.js ${process.version}`)
  }
}

/** better-sqlite3's Database constructor: the one way this project opens a SQLite file. */
export const BetterSqlite3: typeof Binding = load()

/** A connection of the binding, and one of its prepared statements. */
export type SqliteConnection = Binding.Database
export type SqliteStatement = ReturnType<SqliteConnection['prepare']>
