import t from 'tap'
import { sql } from 'kysely'
import { createRepositories, migrateTo, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

/*
 * Migration 0019 rewrites the idempotency records already answered (one
 * JSON text each) into status, headers and a deflated body, naming the
 * person each is about: a repeat after the upgrade still gets its first
 * answer, and deleting that person erases it.
 */

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  sqlite: sqliteFile,
  postgres: postgresDatabase
}

const ADA = '0192f6c4-0000-7000-8000-00000000000a'
const LATER = '2099-01-01T00:00:00.000Z'

const claimOf = (scope: string, key: string) =>
  ({ scope, key, owner: scope, fingerprint: `fingerprint of ${key}`, token: 'another token', lockedUntil: new Date(LATER), expiresAt: new Date(LATER) })

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: records answered before 0019 are replayed after it, and erased with their person`, async (t) => {
    const handle = await open(t)
    await migrateTo(handle, '0014-person-name-nfc')
    const person = { id: ADA, name: 'Ada', email: 'ada@example.org' }
    const message = { id: '0192f6c4-0000-7000-8000-00000000000b', personId: ADA, text: 'a "quoted" text', senderId: 'caller', sentAt: '2026-11-28T10:00:00.000Z' }
    const old = [
      ['create', JSON.stringify({ status: 201, headers: { location: `/person/${ADA}`, etag: '"1"' }, body: person })],
      ['send', JSON.stringify({ status: 201, headers: { location: `/message/${message.id}` }, body: message })],
      ['running', null]
    ] as const
    for (const [key, response] of old) {
      await sql`insert into idempotency_key (scope, key, fingerprint, token, response, locked_until, expires_at)
        values ('caller', ${key}, ${`fingerprint of ${key}`}, 'the token', ${response}, ${LATER}, ${LATER})`.execute(handle.db)
    }
    await migrateToLatest(handle)
    const { idempotency, people } = createRepositories(handle)
    const read = async (key: string) => {
      const held = await idempotency.claim(claimOf('caller', key), new Date('2026-11-28T12:00:00.000Z'))
      if (held.claimed) throw new Error(`${key} was not kept`)
      return held.record
    }
    const created = await read('create')
    t.same([created.response?.status, created.response?.headers, JSON.parse(Buffer.from(created.response?.body ?? []).toString())],
      [201, { location: `/person/${ADA}`, etag: '"1"' }, person], 'the create, as first answered')
    t.equal(created.subject, ADA)
    const sent = await read('send')
    t.same(JSON.parse(Buffer.from(sent.response?.body ?? []).toString()), message)
    t.equal(sent.subject, ADA, 'a message is about its recipient')
    const running = await read('running')
    t.same([running.response, running.subject, running.erased, running.token], [null, null, false, 'the token'], 'a record still running stays so')
    t.same((await idempotency.liveRecordsOf('caller', new Date('2026-11-28T12:00:00.000Z'), 10)).count, 3, 'each counts against its caller')

    await people.insert({ id: ADA, name: 'Ada', age: null, email: null, address: null, createdAt: new Date(), updatedAt: new Date(), version: 1 })
    await people.delete(ADA)
    for (const key of ['create', 'send']) {
      const erased = await read(key)
      t.same([erased.response, erased.erased], [null, true], `${key}: erased with Ada`)
    }
  })
}
