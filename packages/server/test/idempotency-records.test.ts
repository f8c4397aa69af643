import t, { type Test } from 'tap'
import { createDatabase, type DatabaseHandle } from '@people-service/infra'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { call, login, start, tempDatabaseUrl } from './helper.js'

/*
 * What an Idempotency-Key makes the service keep, through the real server on
 * a real port: a record no larger than the response it replays, erased with
 * the person it is about (a repeat then answers 404 and makes nothing), and
 * at most IDEMPOTENCY_KEYS_PER_DAY records per account, however many
 * credentials it sends them with.
 */

type Headers = Record<string, string>

const openDatabase = (t: Test, url: string): DatabaseHandle => {
  const handle = createDatabase({ url, poolSize: 1 })
  t.teardown(() => handle.close())
  return handle
}

const recordsOf = async ({ db }: DatabaseHandle) =>
  db.selectFrom('idempotency_key').select(['key', 'owner', 'subject', 'status', 'headers', 'body', 'erased']).orderBy('key').execute()

const erasedWithThePerson = async (t: Test, url: string) => {
  const server = await start(t, { DATABASE_URL: url })
  const admin = await login(server.url)
  const created = await call(server.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-ada' },
    { name: 'Ada', email: 'ada@example.org', address: { street: '12 St James\'s Square', city: 'London', country: 'UK' } })
  t.equal(created.status, 201)
  const ada = created.json() as { id: string }
  const sent = await call(server.url, 'POST', '/message', { ...admin, 'idempotency-key': 'write-ada' }, { personId: ada.id, text: 'hello Ada' })
  t.equal(sent.status, 201)
  t.equal((await call(server.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-ada' }, { name: 'Ada', email: 'ada@example.org', address: { street: '12 St James\'s Square', city: 'London', country: 'UK' } })).headers.get('idempotent-replayed'), 'true', 'replayed while Ada lives')

  t.equal((await call(server.url, 'DELETE', `/person/${ada.id}`, admin)).status, 200)
  const database = openDatabase(t, url)
  for (const record of await recordsOf(database)) {
    t.same([record.subject, record.status, record.headers, record.body, record.erased], [ada.id, null, null, null, 1], `${record.key}: nothing of Ada is kept`)
  }
  const again = await call(server.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-ada' },
    { name: 'Ada', email: 'ada@example.org', address: { street: '12 St James\'s Square', city: 'London', country: 'UK' } })
  t.equal(again.status, 404, 'the repeat: the person is gone')
  t.match(again.json(), { code: 'PERSON_NOT_FOUND', message: `no person with id "${ada.id}"` })
  t.notMatch(again.text, /ada@example\.org|St James/, 'never the deleted data')
  t.equal(again.headers.get('idempotent-replayed'), null)
  const resent = await call(server.url, 'POST', '/message', { ...admin, 'idempotency-key': 'write-ada' }, { personId: ada.id, text: 'hello Ada' })
  t.equal(resent.status, 404)
  t.notMatch(resent.text, /hello Ada/)
  t.same((await call(server.url, 'GET', '/people', admin)).json(), [], 'nothing made anew')
  const reused = await call(server.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-ada' }, { name: 'Grace' })
  t.equal(reused.status, 422, 'the key still names its first request')
}

t.test('SQLite: deleting a person erases the stored answers holding their data; a repeat answers 404 and makes nothing', async (t) => {
  await erasedWithThePerson(t, tempDatabaseUrl(t))
})

t.test('PostgreSQL: deleting a person erases the stored answers holding their data; a repeat answers 404 and makes nothing', async (t) => {
  const database = await createPostgresDatabase('people_records')
  t.teardown(database.drop)
  await erasedWithThePerson(t, database.url)
})

t.test('a stored answer takes less room than the response it replays, and replays it byte for byte', async (t) => {
  const url = tempDatabaseUrl(t)
  const server = await start(t, { DATABASE_URL: url })
  const admin = await login(server.url)
  const { id } = (await call(server.url, 'POST', '/person', admin, { name: 'Ada' })).json() as { id: string }
  const texts = {
    // JSON writes each as two characters on the wire.
    quotes: '"'.repeat(10_000),
    randomPrintable: Array.from({ length: 10_000 }, (_, i) => String.fromCharCode(33 + ((i * 7919 + (i >> 3) * 104_729) % 94))).join(''),
    emoji: Array.from({ length: 10_000 }, (_, i) => String.fromCodePoint(0x1F300 + ((i * 7919) % 700))).join('')
  }
  const database = openDatabase(t, url)
  for (const [kind, text] of Object.entries(texts)) {
    const sent = await call(server.url, 'POST', '/message', { ...admin, 'idempotency-key': kind }, { personId: id, text })
    t.equal(sent.status, 201, kind)
    const [record] = (await recordsOf(database)).filter((row) => row.key === kind)
    const stored = (record?.body?.length ?? Infinity) + (record?.headers?.length ?? 0)
    const wire = Buffer.byteLength(sent.text)
    t.ok(stored < wire, `${kind}: ${stored} bytes stored for a response of ${wire}`)
    const again = await call(server.url, 'POST', '/message', { ...admin, 'idempotency-key': kind }, { personId: id, text })
    t.equal(again.headers.get('idempotent-replayed'), 'true')
    t.equal(again.text, sent.text, `${kind}: the same bytes again`)
  }
})

t.test('an account holds at most IDEMPOTENCY_KEYS_PER_DAY keys, whichever of its credentials sends them: then 429 with Retry-After', async (t) => {
  const url = tempDatabaseUrl(t)
  const server = await start(t, { DATABASE_URL: url, IDEMPOTENCY_KEYS_PER_DAY: '3' })
  const admin = await login(server.url)
  const key = (await call(server.url, 'POST', '/api-keys', admin, { name: 'importer' })).json() as { key: string }
  const viaKey: Headers = { 'x-api-key': key.key }
  const statuses: number[] = []
  for (let i = 0; i < 8; i++) {
    const response = await call(server.url, 'POST', '/person', { ...(i % 2 === 0 ? admin : viaKey), 'idempotency-key': `import-${i}` }, { name: `Person ${i}` })
    statuses.push(response.status)
    if (response.status === 429) {
      t.match(response.json(), { code: 'TOO_MANY_IDEMPOTENCY_KEYS', message: /at most 3 Idempotency-Keys within 24 hours/ })
      const retryAfter = Number(response.headers.get('retry-after'))
      t.ok(retryAfter > 86_000 && retryAfter <= 86_400, `Retry-After ${retryAfter}: when the oldest key expires`)
    }
  }
  t.same(statuses, [201, 201, 201, 429, 429, 429, 429, 429])
  t.equal((await call(server.url, 'POST', '/person', { ...viaKey, 'idempotency-key': 'import-1' }, { name: 'Person 1' })).headers.get('idempotent-replayed'), 'true', 'a repeat is still answered')
  t.equal((await call(server.url, 'POST', '/person', admin, { name: 'Without a key' })).status, 201, 'a request without a key is not refused')
  const other = await call(server.url, 'POST', '/users', admin, { username: 'editor', password: 'a password of the other account', role: 'editor' })
  t.equal(other.status, 201)
  const editor = await login(server.url, 'editor', 'a password of the other account')
  t.equal((await call(server.url, 'POST', '/person', { ...editor, 'idempotency-key': 'import-0' }, { name: 'Mine' })).status, 201, 'another account has its own allowance')

  // Every table this door writes to, bounded: the records by the allowance; the people by the refusals.
  const database = openDatabase(t, url)
  const records = await recordsOf(database)
  t.equal(records.length, 4, 'three records of the first account, one of the other')
  t.equal(records.filter((record) => record.owner !== records[0]?.owner).length, 1)
  t.equal((await call(server.url, 'GET', '/people', admin)).json().length, 5, 'nothing made for a refused request')
})
