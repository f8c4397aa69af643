import { accessSync, closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { Kysely, type KyselyConfig } from 'kysely'
import type { Database, DatabaseHandle } from '../database.js'
import { readDirectly } from '../prepared-query.js'
import { BetterSqlite3, type SqliteConnection, type SqliteStatement } from './better-sqlite3.js'
import { GroupCommitDriver, groupCommitDialect } from './group-commit.js'

export type SqliteSynchronous = 'FULL' | 'NORMAL'

export interface SqliteOptions {
  /** A file path, or ':memory:'. */
  path: string
  /**
   * FULL (the default) syncs the WAL on every commit, so an acknowledged write
   * survives power loss as well as a crash. NORMAL survives a process crash but
   * may lose the last commits on power loss. Set on every open: a WAL database
   * reopened by better-sqlite3 otherwise runs with its compile-time default.
   */
  synchronous?: SqliteSynchronous
  /**
   * How much of the file, in MiB, to read through a memory map instead of
   * copies into the page cache; 0 (the default): none. See openSqlite.
   */
  mmapMb?: number
  log?: KyselyConfig['log']
}

/** The largest memory map SQLite makes (SQLITE_MAX_MMAP_SIZE, 0x7fff0000 bytes), in whole MiB: it cuts a larger one silently. */
export const SQLITE_MAX_MMAP_MB = 2047

/** The page cache of every connection, in KiB (see openSqlite). */
const SQLITE_CACHE_KIB = 64 * 1024

const connections = new WeakMap<Kysely<Database>, SqliteConnection>()

/**
 * The connection under a SQLite handle, for bulk work that Kysely's one
 * statement at a time would slow many times over (the seed): pragmas that
 * only hold outside a transaction, statements prepared once and run a
 * million times. Only while nothing else uses the handle.
 */
export const sqliteConnectionOf = (db: Kysely<Database>): SqliteConnection | undefined => connections.get(db)

/**
 * Kysely's SQLite driver prepares every query anew; better-sqlite3 statements
 * can be reused, which saves the parse and plan on every request. Statements
 * run one at a time on the single connection, so sharing is safe.
 */
const cachedPrepare = (database: SqliteConnection, size = 500): (sql: string) => SqliteStatement => {
  const cache = new Map<string, SqliteStatement>()
  return (sql) => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      statement = database.prepare(sql)
      if (cache.size >= size) cache.delete(cache.keys().next().value as string)
      cache.set(sql, statement)
    }
    return statement
  }
}

/** The SQLite file cannot be opened for reading and writing: where, and why. */
export class DatabaseFileError extends Error {
  constructor (readonly path: string, readonly reason: string) {
    super(`the database file ${path} cannot be opened: ${reason}`)
    this.name = 'DatabaseFileError'
  }
}

/** The nearest folder on the way to `folder` that is a file instead, if any. */
const fileInTheWay = (folder: string): string | undefined => {
  for (let at = folder; ; at = dirname(at)) {
    try {
      return statSync(at).isDirectory() ? undefined : at
    } catch {}
    if (dirname(at) === at) return undefined
  }
}

const reasonOf = (error: unknown): string => (error as Error).message || String(error)

/**
 * Makes sure the file can be opened for writing, with a cause the operator
 * can act on, before SQLite answers "unable to open database file" or
 * "attempt to write a readonly database" (or only at the first write): its
 * folder is made, the file created if missing, and the folder must take the
 * -wal and -shm files WAL mode keeps beside it.
 */
const prepareFile = (path: string): void => {
  const folder = dirname(resolve(path))
  try {
    mkdirSync(folder, { recursive: true })
  } catch (error) {
    const file = fileInTheWay(folder)
    throw new DatabaseFileError(path, file === undefined ? reasonOf(error) : `${file} is a file, not a folder`)
  }
  try {
    closeSync(openSync(path, 'a'))
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException
    // ENOENT in a folder that exists: a file system that makes no files (/proc).
    throw new DatabaseFileError(path, code === 'EISDIR'
      ? 'it is a folder'
      : code === 'ENOENT' ? `no file can be created in ${folder} (${reasonOf(error)})` : reasonOf(error))
  }
  try {
    accessSync(folder, constants.W_OK)
  } catch (error) {
    throw new DatabaseFileError(path, `its folder ${folder} is not writable, and SQLite keeps the -wal and -shm files beside the database (${reasonOf(error)})`)
  }
}

export const openSqlite = ({ path, synchronous = 'FULL', mmapMb = 0, log }: SqliteOptions): DatabaseHandle => {
  if (!Number.isSafeInteger(mmapMb) || mmapMb < 0 || mmapMb > SQLITE_MAX_MMAP_MB) {
    throw new RangeError(`mmapMb must be a whole number of MiB from 0 to ${SQLITE_MAX_MMAP_MB}, not ${mmapMb}`)
  }
  const inFile = path !== ':memory:' && path !== ''
  if (inFile) prepareFile(path)
  const database = (() => {
    let opened: SqliteConnection | undefined
    try {
      opened = new BetterSqlite3(path)
      // The first write to the file: a read-only one fails here, not at the first request.
      opened.pragma('journal_mode = WAL')
      return opened
    } catch (error) {
      opened?.close()
      throw inFile ? new DatabaseFileError(path, reasonOf(error)) : error
    }
  })()
  database.pragma(`synchronous = ${synchronous}`)
  database.pragma('foreign_keys = ON')
  // Writers from another process (the seeder, a migration) wait instead of failing.
  database.pragma('busy_timeout = 5000')
  // A 64 MiB page cache bounds what SQLite holds in the process; beyond it
  // pages come from the kernel's file cache. By default no memory-mapped
  // reads: every mapped page touched counts in the process' RSS (a 256 MiB
  // map took the server past 500 MB over a large file). Together they keep
  // the server under 300 MB RSS whatever the file's size. 64 rather than 32
  // MiB since friend lists read the (pk, id, name) index (migration
  // 2026-11-29): at 1M people most of its 71–80 MB then stays in the cache
  // (the friend-list statement alone: 49 → 43 µs; 100k: 28–30 µs either way).
  // Where memory allows, a map saves the copy on every page the cache misses
  // (SQLITE_MMAP_MB; `npm run bench` at 1M people: friend lists 0.194 →
  // 0.224 of the ceiling, GET /person/<id> 0.413 → 0.460, RSS after the run
  // 190 → 1,558 MB).
  database.pragma(`cache_size = -${SQLITE_CACHE_KIB}`)
  database.pragma(`mmap_size = ${mmapMb * 1024 * 1024}`)
  // temp_store stays the default: temporary files, written only when a sort
  // outgrows the cache. In memory, the sort that builds an index over the
  // 20M friendship rows of a seed ran 1.5x as long; a helper thread for such
  // sorts takes another fifth off. (Lookups never sort: see the query plans.)
  database.pragma('threads = 2')
  const driver = new GroupCommitDriver(database, cachedPrepare(database))
  const db = new Kysely<Database>({ dialect: groupCommitDialect(driver), ...(log ? { log } : {}) })
  connections.set(db, database)
  // Kysely logs only the queries that go through it.
  if (!log) readDirectly(db, (sql, parameters) => driver.readNow(sql, parameters))
  return {
    db,
    dialect: 'sqlite',
    async close () {
      await db.destroy()
    }
  }
}
