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

t.test('postgres: accounts made before accounts could be disabled are enabled, at token version 0; the migration goes down and up', async (t) => {
  await database.reset()
  await migrateTo(database, '2026-11-24-person-id-name')
  await sql`insert into account (id, username, role, password_hash, created_at)
    values ('00000000-0000-7000-8000-000000000001', 'ada', 'admin', 'hash', now())`.execute(database.db)
  await migrateToLatest(database)
  const { accounts } = createRepositories(database)
  t.match(await accounts.findByUsername('ada'), { role: 'admin', disabled: false, tokenVersion: 0 })
  // A table of one row is read whole: ask what the planner does with a big one.
  const plan = await database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx)
    return sql<{ 'QUERY PLAN': string }>`explain select * from account where username collate "C" > 'x' order by username collate "C" limit 10`.execute(trx)
  })
  t.match(plan.rows.map((row) => row['QUERY PLAN']).join('\n'), /account_username_bytes/, 'the accounts page follows the byte-order index')
})

t.test('postgres: migrating twice is a no-op', async (t) => {
  t.same((await migrateToLatest(database)).results, [])
})
