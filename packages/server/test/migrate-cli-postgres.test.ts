import t from 'tap'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { checkMigrateCommand } from './migrate-command.js'

// One node process per command, each opening the database: slow on a busy machine.
t.setTimeout(300_000)

t.test('npm run migrate -- status, up and down on PostgreSQL: down through every migration and up again', async (t) => {
  const database = await createPostgresDatabase('people_migrate')
  t.teardown(database.drop)
  await checkMigrateCommand(t, database.url)
})
