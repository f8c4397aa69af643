import t from 'tap'
import { postgresDatabase, type PostgresTestDatabase } from '@people-service/infra/testing'
import { queueSuite } from './webhook-queue-suite.js'

// One private PostgreSQL database for the file, emptied for each test: claims there take FOR UPDATE SKIP LOCKED.
let database: Promise<PostgresTestDatabase> | undefined
queueSuite('postgres', async () => {
  database ??= postgresDatabase(t)
  const handle = await database
  await handle.reset()
  return handle
})
