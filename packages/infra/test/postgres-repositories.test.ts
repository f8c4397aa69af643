import t from 'tap'
import { repositoryContract } from '@people-service/domain/testing'
import { createRepositories, migrateToLatest } from '@people-service/infra'
import { postgresDatabase } from '@people-service/infra/testing'

const database = await postgresDatabase(t)

for (const contractCase of repositoryContract) {
  t.test(`postgres: ${contractCase.name}`, async () => {
    await database.reset()
    await contractCase.run(createRepositories(database))
  })
}

t.test('postgres: migrating twice is a no-op', async (t) => {
  t.same((await migrateToLatest(database)).results, [])
})
