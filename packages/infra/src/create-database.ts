import type { KyselyConfig } from 'kysely'
import type { DatabaseHandle } from './database.js'
import { openPostgres } from './postgres/open-postgres.js'
import { openSqlite, type SqliteSynchronous } from './sqlite/open-sqlite.js'

export interface DatabaseOptions {
  /** `sqlite:<path>`, `sqlite::memory:` or `postgres://…` */
  url: string
  poolSize?: number
  sqliteSynchronous?: SqliteSynchronous
  /** MiB of a SQLite file read through a memory map; 0 or unset: none. */
  sqliteMmapMb?: number
  log?: KyselyConfig['log']
}

/** Opens the database a URL names; the only place that chooses a dialect. */
export const createDatabase = ({ url, poolSize, sqliteSynchronous, sqliteMmapMb, log }: DatabaseOptions): DatabaseHandle => {
  if (url.startsWith('sqlite:')) {
    return openSqlite({
      path: url.slice('sqlite:'.length),
      ...(sqliteSynchronous ? { synchronous: sqliteSynchronous } : {}),
      ...(sqliteMmapMb ? { mmapMb: sqliteMmapMb } : {}),
      ...(log ? { log } : {})
    })
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    return openPostgres({ connectionString: url, ...(poolSize ? { poolSize } : {}), ...(log ? { log } : {}) })
  }
  throw new Error('DATABASE_URL must start with sqlite: or postgres://')
}
