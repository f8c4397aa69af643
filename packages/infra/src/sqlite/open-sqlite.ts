import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { Kysely, SqliteDialect, type KyselyConfig, type SqliteDatabase } from 'kysely'
import type { Database, DatabaseHandle } from '../database.js'

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
  log?: KyselyConfig['log']
}

type Statement = ReturnType<BetterSqlite3.Database['prepare']>

/**
 * Kysely's SQLite driver prepares every query anew; better-sqlite3 statements
 * can be reused, which saves the parse and plan on every request. Kysely runs
 * one query at a time on the single connection, so sharing is safe.
 */
const withStatementCache = (database: BetterSqlite3.Database, size = 500): SqliteDatabase => {
  const cache = new Map<string, Statement>()
  return {
    close: () => database.close(),
    prepare (sql) {
      let statement = cache.get(sql)
      if (statement === undefined) {
        statement = database.prepare(sql)
        if (cache.size >= size) cache.delete(cache.keys().next().value as string)
        cache.set(sql, statement)
      }
      return statement
    }
  }
}

export const openSqlite = ({ path, synchronous = 'FULL', log }: SqliteOptions): DatabaseHandle => {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const database = new BetterSqlite3(path)
  database.pragma('journal_mode = WAL')
  database.pragma(`synchronous = ${synchronous}`)
  database.pragma('foreign_keys = ON')
  // Writers from another process (the seeder, a migration) wait instead of failing.
  database.pragma('busy_timeout = 5000')
  // 64 MiB page cache and memory-mapped reads: lookups stay off the read() path.
  database.pragma('cache_size = -65536')
  database.pragma('mmap_size = 268435456')
  database.pragma('temp_store = MEMORY')
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(database) }),
    ...(log ? { log } : {})
  })
  return {
    db,
    dialect: 'sqlite',
    async close () {
      await db.destroy()
    }
  }
}
