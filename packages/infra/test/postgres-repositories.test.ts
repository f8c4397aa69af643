import t from 'tap'
import { repositoryContract } from '@people-service/domain/testing'
import { sql } from 'kysely'
import { createRepositories, migrateTo, migrateToLatest } from '@people-service/infra'
import { postgresDatabase } from '@people-service/infra/testing'

const database = await postgresDatabase(t)

for (const contractCase of repositoryContract) {
  t.test(`postgres: ${contractCase.name}`, async () => {
    await database.reset()
    await contractCase.run(createRepositories(database))
  })
}

t.test('postgres: people stored before name_lower existed are found once migrated; the migration goes down and up', async (t) => {
  await database.reset()
  await migrateTo(database, '2026-11-22-accounts-and-api-keys')
  await sql`insert into person (id, name, has_address, created_at, updated_at)
    values ('00000000-0000-7000-8000-000000000001', 'Élodie ᲯᲐᲜᲐ', 0, now(), now())`.execute(database.db)
  await migrateToLatest(database)
  const { people } = createRepositories(database)
  for (const needle of ['élodie', 'É', 'ჯანა', 'ᲯᲐᲜᲐ']) {
    t.same((await people.list({ limit: 10, nameContains: needle })).map((p) => p.name), ['Élodie ᲯᲐᲜᲐ'], needle)
  }
  t.equal((await people.findById('00000000-0000-7000-8000-000000000001'))?.version, 1, 'people stored before versions start at 1')
})

t.test('postgres: migrating twice is a no-op', async (t) => {
  t.same((await migrateToLatest(database)).results, [])
})
