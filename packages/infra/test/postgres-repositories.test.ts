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
  await migrateTo(database, '0002-accounts-and-api-keys')
  await sql`insert into person (id, name, has_address, created_at, updated_at)
    values ('00000000-0000-7000-8000-000000000001', 'Élodie ᲯᲐᲜᲐ', 0, now(), now())`.execute(database.db)
  await migrateToLatest(database)
  const { people } = createRepositories(database)
  for (const needle of ['élodie', 'É', 'ჯანა', 'ᲯᲐᲜᲐ']) {
    t.same((await people.list({ limit: 10, nameContains: needle })).map((p) => p.name), ['Élodie ᲯᲐᲜᲐ'], needle)
  }
  t.equal((await people.findById('00000000-0000-7000-8000-000000000001'))?.version, 1, 'people stored before versions start at 1')
})

t.test('postgres: names stored before the final sigma was folded are found by their first letters once migrated', async (t) => {
  await database.reset()
  await migrateTo(database, '0011-account-deleting')
  await sql`insert into person (id, name, name_lower, has_address, created_at, updated_at)
    values ('00000000-0000-7000-8000-000000000001', 'ΟΔΥΣΣΕΥΣ', 'οδυσσευς', 0, now(), now())`.execute(database.db)
  const { people } = createRepositories(database)
  t.same(await people.list({ limit: 10, nameContains: 'ΟΔΥΣΣΕΥΣ' }), [], 'its whole name not found before: the needle\'s last σ against the stored ς')
  await migrateToLatest(database)
  for (const needle of ['ΟΔΥΣ', 'ΟΔΥΣΣΕΥΣ', 'ευς']) t.same((await people.list({ limit: 10, nameContains: needle })).map((p) => p.name), ['ΟΔΥΣΣΕΥΣ'], needle)
  await migrateTo(database, '0011-account-deleting')
  t.same((await sql<{ name_lower: string }>`select name_lower from person`.execute(database.db)).rows.map((r) => r.name_lower), ['οδυσσευς'],
    'down: toLowerCase of the name again, as the search before folds its needle')
  // Back to the latest, so that the next test's reset finds every table it empties.
  await migrateToLatest(database)
})

t.test('postgres: accounts made before accounts could be disabled are enabled, at token version 0; the migration goes down and up', async (t) => {
  await database.reset()
  await migrateTo(database, '0004-person-id-name')
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

t.test('postgres: one unique index on id carries the name; ids stay unique, and a page reads only that index', async (t) => {
  await database.reset()
  const { people } = createRepositories(database)
  const now = new Date()
  const ada = { id: '00000000-0000-7000-8000-000000000001', name: 'Ada', age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
  await people.insert(ada)
  await t.rejects(people.insert({ ...ada, name: 'Another Ada' }), 'a second person with the same id is refused')
  const { rows: indexes } = await sql<{ indexdef: string }>`select indexdef from pg_indexes
    where schemaname = current_schema() and tablename = 'person' and indexdef like '%(id)%'`.execute(database.db)
  t.same(indexes.map((row) => row.indexdef.replace(/ ON \S+/, ' ON person')), ['CREATE UNIQUE INDEX person_page ON person USING btree (id) INCLUDE (name)'])
  // A table of one row is read whole: ask what the planner does with a big
  // one (and a visibility map, as autovacuum keeps it, for index-only scans).
  await sql`vacuum person`.execute(database.db)
  const plan = await database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx)
    await sql`set local enable_bitmapscan = off`.execute(trx)
    return sql<{ 'QUERY PLAN': string }>`explain select id, name from person where id > 'x' order by id limit 100`.execute(trx)
  })
  const steps = plan.rows.map((row) => row['QUERY PLAN']).join('\n')
  t.match(steps, /Index Only Scan using person_page/)
  t.notMatch(steps, /Sort/, steps)
})

t.test('postgres: a page of friends after a cursor seeks in the friendship key, with no sort', async (t) => {
  await database.reset()
  // 2,000 people, the first a friend of every other: a list worth paging.
  await sql`insert into person (pk, id, name, created_at, updated_at) overriding system value
    select n, '00000000-0000-7000-8000-' || lpad(n::text, 12, '0'), 'Person ' || n, now(), now() from generate_series(1, 2000) n`.execute(database.db)
  await sql`insert into friendship (person_pk, friend_pk) select 1, n from generate_series(2, 2000) n
    union all select n, 1 from generate_series(2, 2000) n`.execute(database.db)
  await sql`analyze person`.execute(database.db)
  await sql`analyze friendship`.execute(database.db)
  const plan = await database.db.transaction().execute(async (trx) => {
    await sql`set local enable_seqscan = off`.execute(trx)
    await sql`set local enable_bitmapscan = off`.execute(trx)
    return sql<{ 'QUERY PLAN': string }>`explain select p.id, p.name, f.friend_pk from friendship f join person p on p.pk = f.friend_pk
      where f.person_pk = 1 and f.friend_pk > cast(400 as bigint) order by f.friend_pk limit 11`.execute(trx)
  })
  const steps = plan.rows.map((row) => row['QUERY PLAN']).join('\n')
  t.match(steps, /Index Only Scan using friendship_pk on friendship f.*\n\s+Index Cond: \(\(person_pk = 1\) AND \(friend_pk > '400'::bigint\)\)/, steps)
  t.notMatch(steps, /Sort/, steps)
})
