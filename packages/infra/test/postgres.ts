import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { sql } from 'kysely'
import { createDatabase, migrateToLatest, type DatabaseHandle } from '@people-service/infra'

/** The local server of the README: 127.0.0.1:5432, user postgres, trust auth. */
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

interface Teardown { teardown(fn: () => unknown): void }

const withAdmin = async (statement: string): Promise<void> => {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await client.connect()
  try {
    await client.query(statement)
  } finally {
    await client.end()
  }
}

/**
 * A database of its own for one test file, migrated, and dropped at the end
 * (WITH (FORCE): no connection left behind can keep it alive).
 */
export const postgresDatabase = async (t: Teardown): Promise<DatabaseHandle & { url: string, reset(): Promise<void> }> => {
  const name = `people_test_${randomBytes(6).toString('hex')}`
  await withAdmin(`create database ${name}`)
  const url = POSTGRES_ADMIN_URL.replace(/\/[^/]*$/, `/${name}`)
  const handle = createDatabase({ url, poolSize: 5 })
  t.teardown(async () => {
    await handle.close()
    await withAdmin(`drop database if exists ${name} with (force)`)
  })
  await migrateToLatest(handle)
  return {
    ...handle,
    url,
    async reset () {
      await sql`truncate person, friendship, message cascade`.execute(handle.db)
    }
  }
}
