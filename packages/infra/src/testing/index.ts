import { randomBytes } from 'node:crypto'
import type { Kysely } from 'kysely'
import pg from 'pg'
import { createDatabase } from '../create-database.js'
import type { Database, DatabaseHandle } from '../database.js'
import { migrateToLatest } from '../migrate.js'
import { testPostgresUrl } from './test-services.js'

export { ACCOUNT_DELETION_STEPS } from '../account/account-deletion.js'
export { NO_NATS, NO_REDIS, ownNatsServer, ownRedisServer, skipWithoutNats, skipWithoutNatsServer, testNatsUrl, skipWithoutRedis, skipWithoutRedisServer, stopTestServices, testPostgresUrl, testRedisUrl } from './test-services.js'
export type { PrivateServer } from './supervised-server.js'
export type { PrivateNats } from './private-nats.js'

/** What a test offers for cleaning up after it (tap's `t`). */
export interface Teardown { teardown(fn: () => unknown): void }

export interface PostgresTestDatabase extends DatabaseHandle {
  url: string
  /** Empties every table the service writes, leaving the schema and its migrations. */
  reset(): Promise<void>
}

// Emptied in this order, children before parents, for the foreign keys.
// Typed against Database, so a table added there fails to compile until it
// is listed here too, and a reset can never leave one of them behind.
const dataTables: Record<keyof Database, true> = {
  idempotency_key: true,
  api_key_usage: true,
  api_key: true,
  account: true,
  friendship: true,
  message: true,
  person: true,
  service_setting: true,
  event: true,
  // One row each, set back to their start rather than deleted (resetTable).
  event_sequence: true,
  webhook_delivery: true,
  webhook: true,
  webhook_relay: true
}

const resetTable = async (trx: Kysely<Database>, table: keyof Database): Promise<void> => {
  if (table === 'event_sequence') await trx.updateTable('event_sequence').set({ last: 0, pruned_through: 0 }).execute()
  else if (table === 'webhook_relay') await trx.updateTable('webhook_relay').set({ position: 0 }).execute()
  else await trx.deleteFrom(table).execute()
}

/**
 * Runs one statement as the server's administrator (create or drop a
 * database, checkpoint): on the server at `adminUrl`, by default the tests'
 * (testPostgresUrl).
 */
export const asPostgresAdmin = async (statement: string, adminUrl?: string): Promise<void> => {
  const client = new pg.Client({ connectionString: adminUrl ?? await testPostgresUrl() })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * A new, empty database on the server at `adminUrl`, by default the tests'
 * (testPostgresUrl): its name, its URL, and how to drop it.
 */
export const createPostgresDatabase = async (prefix: string, adminUrl?: string): Promise<{ name: string, url: string, drop(): Promise<void> }> => {
  adminUrl ??= await testPostgresUrl()
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  await asPostgresAdmin(`create database ${name}`, adminUrl)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return {
    name,
    url: url.href,
    // WITH (FORCE): no connection left behind can keep the database alive.
    drop: () => asPostgresAdmin(`drop database if exists ${name} with (force)`, adminUrl)
  }
}

/**
 * A database of its own, migrated, and dropped when `t` ends, once its pool
 * is closed.
 */
export const postgresDatabase = async (t: Teardown): Promise<PostgresTestDatabase> => {
  const { url, drop } = await createPostgresDatabase('people_test')
  const handle = createDatabase({ url, poolSize: 5 })
  t.teardown(async () => {
    await handle.close()
    await drop()
  })
  await migrateToLatest(handle)
  return {
    ...handle,
    url,
    // DELETE rather than TRUNCATE: on the few rows a test leaves it takes
    // under a millisecond, where TRUNCATE takes some 50 ms (new files for
    // every table and index, synced at commit), and suites reset per test.
    // No table has a sequence to restart: ids are made by the service.
    async reset () {
      await handle.db.transaction().execute(async (trx) => {
        for (const table of Object.keys(dataTables) as Array<keyof Database>) await resetTable(trx, table)
      })
    }
  }
}
