import { randomBytes } from 'node:crypto'
import { join } from 'node:path'
import pg from 'pg'
import t, { type Test } from 'tap'
import { BetterSqlite3 } from '@people-service/infra'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { adminHeaders, startServerProcess, type ServerProcess } from './server-process.js'

/*
 * Durability under a crash: the real server takes concurrent writes, is
 * killed with SIGKILL at a random moment, and restarts. Every write that was
 * acknowledged with a 2xx must be there, whole; nothing half-written may be.
 */

interface Acknowledged {
  people: Map<string, { name: string, city: string }>
  friendships: Array<[string, string]>
  messages: Map<string, string>
}

const load = async (server: ServerProcess, headers: Record<string, string>, until: () => boolean): Promise<Acknowledged> => {
  const acknowledged: Acknowledged = { people: new Map(), friendships: [], messages: new Map() }
  const send = async (method: string, path: string, body?: object) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {})
    })
    return { status: response.status, body: await response.json() as { id: string } }
  }
  const worker = async (w: number) => {
    for (let i = 0; !until(); i++) {
      try {
        const city = `City ${w}-${i}`
        const created = await send('POST', '/person', { name: `Worker ${w} #${i}`, address: { street: 'Main St', city, country: 'UK' } })
        if (created.status !== 201) continue
        acknowledged.people.set(created.body.id, { name: `Worker ${w} #${i}`, city })
        const known = [...acknowledged.people.keys()]
        const other = known[Math.floor(Math.random() * known.length)]!
        if (other !== created.body.id && (await send('PUT', `/person/${created.body.id}/friends/${other}`)).status === 200) {
          acknowledged.friendships.push([created.body.id, other])
        }
        const message = await send('POST', '/message', { personId: other, text: `from ${w}-${i}` })
        if (message.status === 201) acknowledged.messages.set(message.body.id, `from ${w}-${i}`)
      } catch {
        // The server died mid-request: that write was never acknowledged.
      }
    }
  }
  await Promise.all(Array.from({ length: 8 }, (_, w) => worker(w)))
  return acknowledged
}

// The test counts writes and reads, not budgets: with limits on, a 429 during
// the check would pass for a lost write once enough writes were acknowledged.
const NO_LIMITS = { RATE_LIMIT_MAX: '0' }

const crashAndCheck = async (t: Test, serverEnv: Record<string, string>, reuse?: { dataDir: string }) => {
  const env = { ...serverEnv, ...NO_LIMITS }
  const first = await startServerProcess(t, env, reuse)
  const headers = await adminHeaders(first.url)
  let stop = false
  const writes = load(first, headers, () => stop)
  await new Promise((resolve) => setTimeout(resolve, 500 + Math.random() * 1000))
  first.child.kill('SIGKILL')
  await first.exited
  stop = true
  const acknowledged = await writes
  t.ok(acknowledged.people.size > 10, `${acknowledged.people.size} people, ${acknowledged.friendships.length} friendships, ${acknowledged.messages.size} messages acknowledged before the kill`)

  const second = await startServerProcess(t, env, { dataDir: first.dataDir })
  const after = await adminHeaders(second.url)
  const get = async (path: string) => {
    const response = await fetch(`${second.url}${path}`, { headers: after })
    // Found or not found are answers about the data; anything else is not.
    if (response.status !== 200 && response.status !== 404) throw new Error(`GET ${path} answered ${response.status}`)
    return { status: response.status, body: await response.json() as Record<string, unknown> & Array<{ id: string }> }
  }
  let missing = 0
  for (const [id, { name, city }] of acknowledged.people) {
    const person = await get(`/person/${id}`)
    if (person.status !== 200 || person.body.name !== name || (person.body.address as { city?: string } | null)?.city !== city) missing++
  }
  t.equal(missing, 0, 'every acknowledged person is there with their address')
  let oneSided = 0
  for (const [a, b] of acknowledged.friendships) {
    const ofA = (await get(`/person/${a}/friends?limit=100`)).body.map((p) => p.id)
    const ofB = (await get(`/person/${b}/friends?limit=100`)).body.map((p) => p.id)
    if (!ofA.includes(b) || !ofB.includes(a)) oneSided++
  }
  t.equal(oneSided, 0, 'every acknowledged friendship is there, in both directions')
  let lost = 0
  for (const [id, text] of acknowledged.messages) if ((await get(`/message/${id}`)).body.text !== text) lost++
  t.equal(lost, 0, 'every acknowledged message is there')
  second.child.kill('SIGTERM')
  await second.exited
  return first.dataDir
}

const ONE_SIDED = 'select count(*) as n from friendship f where not exists (select 1 from friendship g where g.person_pk = f.friend_pk and g.friend_pk = f.person_pk)'
const WITHOUT_ADDRESS = "select count(*) as n from person where name like 'Worker %' and (has_address = 0 or city is null)"

t.test('SQLite: SIGKILL under concurrent writes loses nothing acknowledged and leaves nothing half-written', async (t) => {
  const dataDir = await crashAndCheck(t, {})
  const db = new BetterSqlite3(join(dataDir, 'people.db'), { readonly: true })
  t.teardown(() => db.close())
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok')
  t.same(db.pragma('foreign_key_check'), [], 'no row points at nothing')
  t.equal((db.prepare(ONE_SIDED).get() as { n: number }).n, 0, 'no one-sided friendship')
  t.equal((db.prepare(WITHOUT_ADDRESS).get() as { n: number }).n, 0, 'no person without their address')
})

t.test('PostgreSQL: the same', async (t) => {
  const database = await createPostgresDatabase('people_crash')
  t.teardown(database.drop)
  const run = async (sql: string) => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try { return (await client.query(sql)).rows as Array<{ n: string }> } finally { await client.end() }
  }
  await crashAndCheck(t, { DATABASE_URL: database.url, JWT_SECRET: randomBytes(32).toString('base64url') })
  t.equal(Number((await run(ONE_SIDED))[0]?.n), 0, 'no one-sided friendship')
  t.equal(Number((await run(WITHOUT_ADDRESS))[0]?.n), 0, 'no person without their address')
})
