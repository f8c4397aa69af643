import { join } from 'node:path'
import t, { type Test } from 'tap'
import { BetterSqlite3 } from '@people-service/infra'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { call, login, start, tempDatabaseUrl } from './helper.js'
import { adminHeaders, startServerProcess } from './server-process.js'

/*
 * Safe retries and concurrent edits through the real server on a real port:
 * a retry after a restart or a crash, and several instances on one
 * PostgreSQL database, where only the database can tell requests apart.
 */

type Headers = Record<string, string>

const replayedAcrossRestart = async (t: Test, env: Headers) => {
  const first = await start(t, env)
  const admin = await login(first.url)
  const created = await call(first.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-before-restart' }, { name: 'Ada' })
  t.equal(created.status, 201)
  const ada = created.json()
  const sent = await call(first.url, 'POST', '/message', { ...admin, 'idempotency-key': 'send-before-restart' }, { personId: ada.id, text: 'hello' })
  t.equal(sent.status, 201)
  await first.close()

  const second = await start(t, env)
  const again = await call(second.url, 'POST', '/person', { ...admin, 'idempotency-key': 'create-before-restart' }, { name: 'Ada' })
  t.equal(again.status, 201)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.same(again.json(), ada, 'the first answer, from the database')
  t.equal(again.headers.get('location'), created.headers.get('location'))
  t.equal(again.headers.get('etag'), created.headers.get('etag'))
  const resent = await call(second.url, 'POST', '/message', { ...admin, 'idempotency-key': 'send-before-restart' }, { personId: ada.id, text: 'hello' })
  t.equal(resent.headers.get('idempotent-replayed'), 'true')
  t.same(resent.json(), sent.json())
  t.equal((await call(second.url, 'GET', '/people', admin)).json().length, 1, 'one person')
  t.equal((await call(second.url, 'GET', `/person/${String(ada.id)}/messages`, admin)).json().length, 1, 'one message')
}

/** Two writers with the same If-Match, over HTTP, to one or two instances: one wins. */
const oneOfTwoWins = async (t: Test, urls: [string, string], admin: Headers) => {
  for (let round = 0; round < 5; round++) {
    const created = await call(urls[0], 'POST', '/person', admin, { name: `Contested ${round}` })
    const path = created.headers.get('location') as string
    const etag = created.headers.get('etag') as string
    const [a, b] = await Promise.all([
      call(urls[0], 'PATCH', path, { ...admin, 'if-match': etag }, { age: 1 }),
      call(urls[1], 'PUT', path, { ...admin, 'if-match': etag }, { age: 2 })
    ])
    t.same([a.status, b.status].sort(), [200, 412], `round ${round}: ${a.status} / ${b.status}`)
    const read = await call(urls[1], 'GET', path, admin)
    t.equal(read.json().age, a.status === 200 ? 1 : 2, 'the winner\'s change is the one stored')
    t.equal((await call(urls[0], 'GET', path, { ...admin, 'if-none-match': read.headers.get('etag') as string })).status, 304)
  }
}

t.test('SQLite: a retry after a restart gets the first answer from the file; nothing is made twice', async (t) => {
  await replayedAcrossRestart(t, { DATABASE_URL: tempDatabaseUrl(t) })
})

t.test('PostgreSQL: a retry after a restart gets the first answer; nothing is made twice', async (t) => {
  const database = await createPostgresDatabase('people_retries')
  t.teardown(database.drop)
  await replayedAcrossRestart(t, { DATABASE_URL: database.url })
})

t.test('SQLite: two concurrent writers with the same If-Match over HTTP: one wins', async (t) => {
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t) })
  await oneOfTwoWins(t, [server.url, server.url], await login(server.url))
})

t.test('PostgreSQL: two instances on one database behave as one for keys and versions', async (t) => {
  const database = await createPostgresDatabase('people_retries')
  t.teardown(database.drop)
  const one = await start(t, { DATABASE_URL: database.url })
  const two = await start(t, { DATABASE_URL: database.url })
  const admin = await login(one.url)

  const answers = await Promise.all([one.url, two.url, one.url, two.url].map((url) =>
    call(url, 'POST', '/person', { ...admin, 'idempotency-key': 'both-instances' }, { name: 'Grace' })))
  const created = answers.filter((a) => a.status === 201 && a.headers.get('idempotent-replayed') === null)
  t.equal(created.length, 1, `one instance created: ${answers.map((a) => `${a.status}${a.headers.get('idempotent-replayed') ? ' (replayed)' : ''}`).join(', ')}`)
  for (const answer of answers) {
    if (answer !== created[0]) t.ok(answer.status === 409 || answer.headers.get('idempotent-replayed') === 'true', 'the others: 409 or the first answer')
  }
  for (const url of [one.url, two.url]) {
    const retry = await call(url, 'POST', '/person', { ...admin, 'idempotency-key': 'both-instances' }, { name: 'Grace' })
    t.equal(retry.headers.get('idempotent-replayed'), 'true')
    t.same(retry.json(), created[0]?.json())
  }
  t.equal((await call(two.url, 'GET', '/people', admin)).json().length, 1, 'one person')

  await oneOfTwoWins(t, [one.url, two.url], admin)
})

t.test('SQLite: SIGKILL under keyed creates; after the restart every key names at most one person, and every acknowledged one its own', async (t) => {
  const env = { RATE_LIMIT_MAX: '0' }
  const first = await startServerProcess(t, env)
  const headers = await adminHeaders(first.url)
  const attempted: string[] = []
  const acknowledged = new Map<string, string>()
  const killed = { yet: false }
  const worker = async (w: number) => {
    for (let i = 0; !killed.yet; i++) {
      const key = `crash-${w}-${i}`
      attempted.push(key)
      try {
        const response = await fetch(`${first.url}/person`, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'idempotency-key': key },
          body: JSON.stringify({ name: key })
        })
        if (response.status === 201) acknowledged.set(key, ((await response.json()) as { id: string }).id)
      } catch {
        // The server died mid-request: never acknowledged.
      }
    }
  }
  const load = Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
  await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1000))
  first.child.kill('SIGKILL')
  await first.exited
  killed.yet = true
  await load
  t.ok(acknowledged.size > 10, `${acknowledged.size} of ${attempted.length} keyed creates acknowledged before the kill`)

  // The restart recovers the file first; then it is read as it was left.
  const second = await startServerProcess(t, env, { dataDir: first.dataDir })
  const after = await adminHeaders(second.url)
  for (const [key, id] of [...acknowledged].slice(0, 20)) {
    const retry = await call(second.url, 'POST', '/person', { ...after, 'idempotency-key': key }, { name: key })
    t.equal(retry.status, 201)
    t.equal(retry.json().id, id, `${key}: the first answer`)
  }
  second.child.kill('SIGTERM')
  await second.exited

  const db = new BetterSqlite3(join(first.dataDir, 'people.db'), { readonly: true })
  t.teardown(() => db.close())
  const twice = db.prepare("select name from person where name like 'crash-%' group by name having count(*) > 1").all()
  t.same(twice, [], 'no key made two people')
  // An answered record names the person its answer is about.
  const recordOf = db.prepare('select subject from idempotency_key where key = ? and status = 201').pluck()
  const personOf = db.prepare('select id from person where name = ?').pluck()
  let unrecorded = 0
  for (const [key, id] of acknowledged) {
    if (personOf.get(key) !== id || recordOf.get(key) !== id) unrecorded++
  }
  t.equal(unrecorded, 0, 'every acknowledged create is there with its record and answer')
  let halfDone = 0
  for (const key of attempted) {
    const person = personOf.get(key)
    const subject = recordOf.get(key) as string | undefined
    if ((person !== undefined) !== (subject !== undefined)) halfDone++
  }
  t.equal(halfDone, 0, 'no person without its answer recorded, no answer without its person')
})
