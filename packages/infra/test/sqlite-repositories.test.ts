import t from 'tap'
import { sql } from 'kysely'
import type { PersonSelection } from '@people-service/domain'
import { repositoryContract } from '@people-service/domain/testing'
import { BetterSqlite3, createDatabase, createRepositories, migrateTo, migrateToLatest, migrationStatus, sharedSetting } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

for (const contractCase of repositoryContract) {
  t.test(`sqlite file: ${contractCase.name}`, async (t) => {
    await contractCase.run(createRepositories(await sqliteFile(t)))
  })
}

t.test('every open sets the pragmas explicitly, reopened WAL files included', async (t) => {
  const first = await sqliteFile(t)
  await first.close()
  const reopened = createDatabase({ url: `sqlite:${first.path}` })
  t.teardown(() => reopened.close())
  const pragma = async (name: string) => Object.values((await sql.raw(`pragma ${name}`).execute(reopened.db)).rows[0] as object)[0]
  t.equal(await pragma('journal_mode'), 'wal')
  t.equal(await pragma('synchronous'), 2, 'FULL')
  t.equal(await pragma('foreign_keys'), 1)
  t.equal(await pragma('busy_timeout'), 5000)
  t.equal(await pragma('cache_size'), -65536, '64 MiB of page cache')
  t.equal(await pragma('mmap_size'), 0, 'no memory map unless asked for')
})

t.test('a memory map, when asked for, reads the same data', async (t) => {
  const first = await sqliteFile(t)
  const person = { id: '01900000-0000-7000-8000-000000000001', name: 'Ada Mapped', age: 36, email: null, address: null, createdAt: new Date(), updatedAt: new Date(), version: 1 }
  await createRepositories(first).people.insert(person)
  await first.close()
  const mapped = createDatabase({ url: `sqlite:${first.path}`, sqliteMmapMb: 64 })
  t.teardown(() => mapped.close())
  t.same((await sql.raw('pragma mmap_size').execute(mapped.db)).rows, [{ mmap_size: 64 * 1024 * 1024 }])
  t.equal((await createRepositories(mapped).people.findById(person.id))?.name, 'Ada Mapped')
  // More than SQLite maps would be cut without a word; a fraction or a negative means nothing.
  for (const bad of [2048, 1.5, -1]) {
    t.throws(() => createDatabase({ url: `sqlite:${first.path}`, sqliteMmapMb: bad }), /mmapMb must be a whole number of MiB from 0 to 2047/, String(bad))
  }
})

t.test('migrating twice is a no-op', async (t) => {
  const handle = await sqliteFile(t)
  const again = await migrateToLatest(handle)
  t.same(again.results, [])
})

t.test('every lookup is served by an index, not a table scan', async (t) => {
  const handle = await sqliteFile(t)
  const raw = new BetterSqlite3(handle.path, { readonly: true })
  t.teardown(() => raw.close())
  const plan = (query: string): string =>
    raw.prepare(`explain query plan ${query}`).all().map((row) => (row as { detail: string }).detail).join(' | ')
  const lookups: Record<string, string> = {
    'person by id': "select * from person where id = 'x'",
    'people page': "select id, name from person where id > 'x' order by id limit 10",
    'person by key': 'select * from person where pk = 1',
    'name search': 'select id from person where pk in (select rowid from person_name where person_name match \'"ada"\')',
    'friends of one': 'select friend_pk from friendship where person_pk = 1 order by friend_pk limit 10',
    'friendships pointing at a deleted person': 'delete from friendship where friend_pk = 1 and person_pk in (select friend_pk from friendship where person_pk = 1)',
    inbox: 'select * from message where person_pk = 1 order by sent_at desc, id desc limit 20',
    'message by id': "select * from message where id = 'x'",
    'account by username': "select * from account where username = 'x'",
    'accounts page': "select * from account where username > 'x' order by username limit 10",
    'keys of a deleted account': "delete from api_key where owner_id = 'x'",
    'usage of a deleted account': "delete from api_key_usage where key_id in (select id from api_key where owner_id = 'x')",
    'api key by lookup id': "select * from api_key where lookup_id = 'x'",
    'keys of one owner': "select * from api_key where owner_id = 'x' and revoked_at is null order by created_at, id limit 10",
    'keys of everyone': 'select * from api_key where revoked_at is null order by created_at, id limit 10',
    'usage of one key': "select day, requests from api_key_usage where key_id = 'x' order by day",
    'idempotency record': "select * from idempotency_key where scope = 'x' and key = 'y'",
    'expired idempotency records': "select scope, key from idempotency_key where expires_at <= 'x' order by expires_at limit 500",
    'deleting expired idempotency records': "delete from idempotency_key where (scope, key) in (select scope, key from idempotency_key where expires_at <= 'x' order by expires_at limit 500)",
    'live idempotency records of an account': "select count(*) from (select expires_at from idempotency_key where owner = 'x' and expires_at > 'y' limit 10001)",
    'the first of them to expire': "select expires_at from idempotency_key where owner = 'x' and expires_at > 'y' order by expires_at limit 1",
    'answers about a deleted person': "update idempotency_key set status = null, headers = null, body = null, erased = 1 where subject = 'x'"
  }
  for (const [name, query] of Object.entries(lookups)) {
    const detail = plan(query)
    t.notMatch(detail, /SCAN (person|friendship|message|idempotency_key)\b(?! USING)/, `${name}: ${detail}`)
    t.notMatch(detail, /USE TEMP B-TREE FOR ORDER BY/, `${name} needs no sort: ${detail}`)
  }
})

/**
 * Repositories over a SQLite file that record every statement they run, and
 * the query plan of a recorded statement with its own parameters.
 */
const recordingRepositories = async (t: Teardown) => {
  const executed: Array<{ sql: string, parameters: readonly unknown[] }> = []
  const { path } = await sqliteFile(t)
  const handle = createDatabase({ url: `sqlite:${path}`, log: (event) => { executed.push(event.query) } })
  t.teardown(() => handle.close())
  const raw = new BetterSqlite3(path, { readonly: true })
  t.teardown(() => raw.close())
  const planOf = ({ sql: text, parameters }: { sql: string, parameters: readonly unknown[] }): string =>
    raw.prepare(`explain query plan ${text}`).all(...parameters).map((row) => (row as { detail: string }).detail).join(' | ')
  return { repositories: createRepositories(handle), executed, planOf }
}

t.test('a friend list finds its owner by the unique id index and each friend in the (pk, id, name) index, not the table', async (t) => {
  const { repositories: { friendships }, executed, planOf } = await recordingRepositories(t)
  const ids = ['00000000-0000-7000-8000-000000000001', '00000000-0000-7000-8000-000000000002']
  await friendships.listFriends(ids[0] as string, 10)
  await friendships.listFriendsOfMany(ids, 10)
  await friendships.pageFriends(ids[0] as string, { limit: 11, after: 1 })
  await friendships.pageFriendsOfMany(ids, 11)
  const friendQueries = executed.filter((query) => query.sql.includes('friendship'))
  t.equal(friendQueries.length, 4)
  for (const query of friendQueries) {
    const plan = planOf(query)
    t.match(plan, /SEARCH \w+ USING COVERING INDEX person_id_unique \(id=\?\)/, plan)
    t.match(plan, /SEARCH p USING COVERING INDEX person_summary \(pk=\?\)/, plan)
    t.notMatch(plan, /INTEGER PRIMARY KEY/, plan)
    t.notMatch(plan, /SCAN (person|friendship)\b(?! USING)/, plan)
  }
})

t.test('a page of friends after a cursor seeks to it in the friendship key, however far along the cursor is', async (t) => {
  const { repositories: { friendships }, executed, planOf } = await recordingRepositories(t)
  await friendships.pageFriends('00000000-0000-7000-8000-000000000001', { limit: 11, after: 400 })
  const plan = planOf(executed.find((query) => query.sql.includes('friendship'))!)
  t.match(plan, /SEARCH f USING PRIMARY KEY \(person_pk=\? AND friend_pk>\?\)/, plan)
  t.notMatch(plan, /TEMP B-TREE/, `no sort: ${plan}`)
})

t.test('an inbox page after a cursor seeks to it in the inbox index, however far back the cursor is', async (t) => {
  const { repositories: { messages }, executed, planOf } = await recordingRepositories(t)
  // Spelled as an OR of comparisons, the index gave the person only: every
  // newer message was read first (35 ms for a cursor older than 400,000).
  await messages.listForPerson('00000000-0000-7000-8000-000000000001', { limit: 20, before: { sentAt: new Date(0), id: '00000000-0000-7000-8000-000000000000' } })
  const plan = planOf(executed.find((query) => query.sql.includes('message'))!)
  t.match(plan, /SEARCH message USING INDEX message_inbox \(person_pk=\? AND \(sent_at,id\)<\(\?,\?\)\)/, plan)
})

t.test('friends selected for ids and names only are read from the (pk, id, name) index, any other field from the table', async (t) => {
  const { repositories: { projections }, executed, planOf } = await recordingRepositories(t)
  const id = '00000000-0000-7000-8000-000000000001'
  const friendsOf = (selection: PersonSelection): PersonSelection => [{ kind: 'friends', key: 'friends', limit: 10, selection }]
  const summaries = friendsOf([
    { kind: 'constant', key: '__typename', value: 'Person' },
    { kind: 'field', key: 'id', field: 'id' },
    { kind: 'friends', key: 'friends', limit: 5, selection: [{ kind: 'field', key: 'name', field: 'name' }] }
  ])
  await projections.findJson(id, summaries)
  await projections.listJson({ limit: 10 }, summaries)
  await projections.listJson({ limit: 10, afterId: id }, summaries)
  t.equal(executed.length, 3)
  for (const query of executed) {
    const plan = planOf(query)
    t.equal(plan.match(/USING COVERING INDEX person_summary \(pk=\?\)/g)?.length, 2, `both levels of friends: ${plan}`)
    t.notMatch(plan, /INTEGER PRIMARY KEY/, plan)
  }
  for (const other of [[{ kind: 'field', key: 'age', field: 'age' }], [{ kind: 'address', key: 'address', selection: [] }]] as const) {
    executed.length = 0
    await projections.findJson(id, friendsOf(other))
    const plan = planOf(executed[0]!)
    t.match(plan, /SEARCH \w+ USING INTEGER PRIMARY KEY \(rowid=\?\)/, `${other[0].kind}: ${plan}`)
    t.notMatch(plan, /person_summary/, plan)
  }
})

t.test('a page of people is one range of the (id, name) index, never the table', async (t) => {
  const { repositories: { people }, executed, planOf } = await recordingRepositories(t)
  const afterId = '00000000-0000-7000-8000-000000000001'
  await people.list({ limit: 10 })
  await people.list({ limit: 10, afterId })
  await people.listJson?.({ limit: 10 })
  await people.listJson?.({ limit: 10, afterId })
  t.equal(executed.length, 4)
  for (const query of executed) {
    const plan = planOf(query)
    t.match(plan, /(SCAN|SEARCH) person USING COVERING INDEX person_page\b/, plan)
    t.notMatch(plan, /USE TEMP B-TREE/, plan)
  }
})

t.test('name search finds substrings case-insensitively through the trigram index', async (t) => {
  const handle = await sqliteFile(t)
  const { people } = createRepositories(handle)
  const now = new Date()
  const base = { age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
  await people.insert({ ...base, id: '00000000-0000-7000-8000-000000000001', name: 'Ada Lovelace' })
  await people.insert({ ...base, id: '00000000-0000-7000-8000-000000000002', name: '100% Grace_Hopper' })
  t.same((await people.list({ limit: 10, nameContains: 'lovelace' })).map((p) => p.name), ['Ada Lovelace'])
  t.same((await people.list({ limit: 10, nameContains: '0% g' })).map((p) => p.name), ['100% Grace_Hopper'])
  t.same((await people.list({ limit: 10, nameContains: 'e_h' })).map((p) => p.name), ['100% Grace_Hopper'])
  t.same((await people.list({ limit: 10, nameContains: 'e h' })).map((p) => p.name), [], 'underscore is no wildcard')
  await people.update({ ...base, id: '00000000-0000-7000-8000-000000000001', name: 'Augusta King', version: 2 }, 1)
  t.same(await people.list({ limit: 10, nameContains: 'lovelace' }), [], 'the index follows renames')
})

t.test('people stored before name_lower existed are found once migrated; the migration goes down and up', async (t) => {
  const handle = await sqliteFile(t)
  await migrateTo(handle, '0002-accounts-and-api-keys')
  await sql`insert into person (id, name, has_address, created_at, updated_at)
    values ('00000000-0000-7000-8000-000000000001', 'Élodie ᲯᲐᲜᲐ', 0, 'x', 'x')`.execute(handle.db)
  await migrateToLatest(handle)
  const { people } = createRepositories(handle)
  for (const needle of ['élodie', 'É', 'ჯანა', 'ᲯᲐᲜᲐ']) {
    t.same((await people.list({ limit: 10, nameContains: needle })).map((p) => p.name), ['Élodie ᲯᲐᲜᲐ'], needle)
  }
  t.equal((await people.findById('00000000-0000-7000-8000-000000000001'))?.version, 1, 'people stored before versions start at 1')
})

t.test('accounts made before accounts could be disabled are enabled, at token version 0; the migration goes down and up', async (t) => {
  const handle = await sqliteFile(t)
  await migrateTo(handle, '0004-person-id-name')
  await sql`insert into account (id, username, role, password_hash, created_at)
    values ('00000000-0000-7000-8000-000000000001', 'ada', 'admin', 'hash', '2026-11-24T10:00:00.000Z')`.execute(handle.db)
  await migrateToLatest(handle)
  const { accounts } = createRepositories(handle)
  t.match(await accounts.findByUsername('ada'), { role: 'admin', disabled: false, tokenVersion: 0 })
})

t.test('friends stored before the (pk, id, name) index are listed through it once migrated; the migration goes down and up', async (t) => {
  const handle = await sqliteFile(t)
  await migrateTo(handle, '0008-person-page-index')
  const ids = [1, 2, 3].map((n) => `00000000-0000-7000-8000-00000000000${n}`)
  for (const [i, id] of ids.entries()) {
    await sql`insert into person (pk, id, name, created_at, updated_at) values (${i + 1}, ${id}, ${`Person ${i + 1}`}, 'x', 'x')`.execute(handle.db)
  }
  await sql`insert into friendship (person_pk, friend_pk) values (1, 3), (3, 1), (1, 2), (2, 1)`.execute(handle.db)
  const summaryIndexes = async () => (await sql<{ name: string }>`select name from sqlite_master where name = 'person_summary'`.execute(handle.db)).rows.length
  t.equal(await summaryIndexes(), 0)
  await migrateToLatest(handle)
  t.equal(await summaryIndexes(), 1)
  const { friendships } = createRepositories(handle)
  const expected = [{ id: ids[1], name: 'Person 2' }, { id: ids[2], name: 'Person 3' }]
  t.same(await friendships.listFriends(ids[0]!, 10), expected)
  await migrateTo(handle, '0008-person-page-index')
  t.equal(await summaryIndexes(), 0, 'down drops it')
  await migrateToLatest(handle)
  t.same(await createRepositories(handle).friendships.listFriends(ids[0]!, 10), expected, 'and up makes it again')
})

t.test('names stored before the final sigma was folded are found by their first letters once migrated; only those names change', async (t) => {
  const handle = await sqliteFile(t)
  await migrateTo(handle, '0011-account-deleting')
  await sql`insert into person (pk, id, name, name_lower, created_at, updated_at) values
    (1, '00000000-0000-7000-8000-000000000001', 'ΟΔΥΣΣΕΥΣ', 'οδυσσευς', 'x', 'x'),
    (2, '00000000-0000-7000-8000-000000000002', 'Ada', 'ada', 'x', 'x')`.execute(handle.db)
  const { people } = createRepositories(handle)
  t.same(await people.list({ limit: 10, nameContains: 'ΟΔΥΣΣΕΥΣ' }), [], 'its whole name not found before: the needle\'s last σ against the stored ς')
  await migrateToLatest(handle)
  for (const needle of ['ΟΔΥΣ', 'ΟΔΥΣΣΕΥΣ', 'ευς']) t.same((await people.list({ limit: 10, nameContains: needle })).map((p) => p.name), ['ΟΔΥΣΣΕΥΣ'], `${needle}, through the trigram index, kept in step`)
  t.same((await sql<{ name_lower: string }>`select name_lower from person order by pk`.execute(handle.db)).rows.map((r) => r.name_lower), ['οδυσσευσ', 'ada'])
  await migrateTo(handle, '0011-account-deleting')
  t.same((await sql<{ name_lower: string }>`select name_lower from person order by pk`.execute(handle.db)).rows.map((r) => r.name_lower), ['οδυσσευς', 'ada'],
    'down: toLowerCase of the name again, as the search before folds its needle')
})

t.test('a shared setting is made once and read back by every later caller', async (t) => {
  const handle = await sqliteFile(t)
  const first = await sharedSetting(handle, 'jwt_secret', () => 'one')
  const second = await sharedSetting(handle, 'jwt_secret', () => 'two')
  t.equal(first, 'one')
  t.equal(second, 'one')
})

t.test('a database migrated when migrations had dated names keeps its history under the numbered names', async (t) => {
  const handle = await sqliteFile(t)
  await sql`update kysely_migration set name = '2026-11-21-initial-schema' where name = '0001-initial-schema'`.execute(handle.db)
  await sql`update kysely_migration set name = '2026-12-02-name-final-sigma' where name = '0012-name-final-sigma'`.execute(handle.db)
  const results = (await migrateToLatest(handle)).results ?? []
  t.same(results, [], 'nothing runs again')
  const states = await migrationStatus(handle)
  t.ok(states.every((state) => state.executedAt !== undefined), 'every migration is recorded as run')
  t.equal(states[0]?.name, '0001-initial-schema')
})
