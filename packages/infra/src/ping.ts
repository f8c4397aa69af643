import { sql } from 'kysely'
import type { DatabaseHandle } from './database.js'

/** One round trip to the database: the readiness probe. */
export const ping = async ({ db }: DatabaseHandle): Promise<boolean> => {
  await sql`select 1`.execute(db)
  return true
}
