import t from 'tap'
import type { Kysely } from 'kysely'
import { createRepositories, migrateDown, migrateTo, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

/*
 * The migrations 0013-username-key and 0014-person-name-nfc on databases
 * that hold rows the new rules would refuse: usernames that are one without
 * regard to case, and names stored decomposed.
 */

const PREVIOUS = '0012-name-final-sigma'

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: async (t) => {
    const database = await postgresDatabase(t)
    await database.reset()
    return database
  }
}

const account = (id: string, username: string, createdAt: string) =>
  ({ id, username, role: 'viewer', password_hash: 'x', disabled: 0, token_version: 0, deleting: 0, created_at: createdAt })

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: colliding usernames, oldest keeps its name, later ones are renamed; decomposed names become NFC`, async (t) => {
    const handle = await open(t)
    await migrateTo(handle, PREVIOUS)
    const db = handle.db as Kysely<any>
    await db.insertInto('account').values([
      account('00000000-0000-7000-8000-00000000000b', 'Admin', '2026-01-02T00:00:00.000Z'),
      account('00000000-0000-7000-8000-00000000000a', 'admin', '2026-01-01T00:00:00.000Z'),
      account('00000000-0000-7000-8000-00000000000c', 'ADMIN', '2026-01-03T00:00:00.000Z'),
      account('00000000-0000-7000-8000-00000000000d', 'grace', '2026-01-04T00:00:00.000Z')
    ]).execute()
    const now = '2026-01-01T00:00:00.000Z'
    await db.insertInto('person').values([
      { id: '00000000-0000-7000-8000-000000000001', name: 'Zoe\u0308', name_lower: 'zoe\u0308', age: null, email: null, has_address: 0, street: null, city: null, country: null, created_at: now, updated_at: now, version: 3 },
      { id: '00000000-0000-7000-8000-000000000002', name: 'Ada', name_lower: 'ada', age: null, email: null, has_address: 0, street: null, city: null, country: null, created_at: now, updated_at: now, version: 1 }
    ]).execute()

    await migrateToLatest(handle)
    const rows = await db.selectFrom('account').select(['id', 'username']).orderBy('id').execute()
    t.same(rows.map((r: { username: string }) => r.username), ['admin', 'Admin-0000000b', 'ADMIN-0000000c', 'grace'], 'the oldest keeps its name')
    const { accounts, people } = createRepositories(handle)
    t.equal((await accounts.findByUsername('ADMIN'))?.id, '00000000-0000-7000-8000-00000000000a', 'a login in any case finds the oldest')
    t.equal((await accounts.findByUsername('admin-0000000B'))?.username, 'Admin-0000000b', 'a renamed account logs in under its new name')
    await t.rejects(accounts.insert({ id: '00000000-0000-7000-8000-00000000000e', username: 'GRACE', role: 'viewer', passwordHash: 'x', disabled: false, tokenVersion: 0, deleting: false, createdAt: new Date() }), { code: 'USERNAME_TAKEN' })

    t.match(await people.findById('00000000-0000-7000-8000-000000000001'), { name: 'Zoë', version: 4 }, 'NFC, with a new version (a new ETag)')
    t.match(await people.findById('00000000-0000-7000-8000-000000000002'), { name: 'Ada', version: 1 }, 'a name already NFC is left alone')
    t.same((await people.list({ limit: 10, nameContains: 'zoë' })).map((p) => p.name), ['Zoë'], 'and found by an NFC needle')

    await migrateDown(handle)
    await migrateDown(handle)
    await migrateToLatest(handle)
    t.equal((await accounts.findByUsername('Grace'))?.username, 'grace', 'down and up again')
  })
}
