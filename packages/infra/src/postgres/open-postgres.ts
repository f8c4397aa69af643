import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import pg from 'pg'
import type { Database, DatabaseHandle } from '../database.js'

export interface PostgresOptions {
  connectionString: string
  poolSize?: number
  log?: KyselyConfig['log']
}

export const openPostgres = ({ connectionString, poolSize = 10, log }: PostgresOptions): DatabaseHandle => {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // Fail fast when the server is away instead of queueing requests forever.
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000
  })
  // A connection that drops must never crash the process: an idle client's
  // error reaches the pool (which replaces it), a checked-out client's error
  // has no listener of its own unless given one, and the query it was running
  // already rejects with the error, which the repositories translate.
  pool.on('error', () => {})
  pool.on('connect', (client) => { client.on('error', () => {}) })
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) })
  return {
    db,
    dialect: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close () {
      await db.destroy()
    }
  }
}
