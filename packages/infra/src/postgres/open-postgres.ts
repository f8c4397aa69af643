import { Kysely, PostgresDialect, type KyselyConfig } from 'kysely'
import pg from 'pg'
import type { Database, DatabaseHandle } from '../database.js'

export interface PostgresOptions {
  connectionString: string
  poolSize?: number
  log?: KyselyConfig['log']
}

export const openPostgres = ({ connectionString, poolSize = 10, log }: PostgresOptions): DatabaseHandle & { pool: pg.Pool } => {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // Fail fast when the server is away instead of queueing requests forever.
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000
  })
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', () => {})
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), ...(log ? { log } : {}) })
  return {
    db,
    dialect: 'postgres',
    pool,
    async close () {
      await db.destroy()
    }
  }
}
