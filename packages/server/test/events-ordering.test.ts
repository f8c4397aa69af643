import { randomBytes } from 'node:crypto'
import t from 'tap'
import { createDatabase } from '@people-service/infra'
import { createPostgresDatabase } from '@people-service/infra/testing'
import { call } from './helper.js'
import { adminHeaders, startServerProcess } from './server-process.js'

/*
 * The guarantee of GET /events on a cluster: two server processes write to
 * one PostgreSQL from many connections at once while a consumer tails the
 * log through both, following the cursors with ?wait=. At the end what it
 * saw is the table: every event exactly once, in position order. A position
 * given before commit (a sequence, a timestamp) would let an event commit
 * behind a cursor already handed out, and the consumer would miss it.
 */

const LANES_PER_INSTANCE = 8
const CHANGES_PER_LANE = 30

interface Event { id: string, type: string, subject: string }

t.test('two instances, many writers, one consumer tailing: it sees every event once, in commit order', async (t) => {
  const database = await createPostgresDatabase('people_events')
  t.teardown(database.drop)
  const env = { DATABASE_URL: database.url, JWT_SECRET: randomBytes(32).toString('base64url'), RATE_LIMIT_MAX: '0', LOG_LEVEL: 'info' }
  const [one, two] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])
  const admin = await adminHeaders(one.url)
  const instances = [one.url, two.url]

  // Writers: each lane creates people, changes them, befriends and writes to them, through one instance.
  let writing = true
  const failures: string[] = []
  const lane = async (base: string, n: number): Promise<void> => {
    let previous: string | undefined
    for (let i = 0; i < CHANGES_PER_LANE; i++) {
      const created = await call(base, 'POST', '/person', admin, { name: `lane ${n} person ${i}` })
      if (created.status !== 201) { failures.push(`create ${created.status} ${created.text}`); continue }
      const id = created.json().id as string
      const steps = [
        call(base, 'PATCH', `/person/${id}`, admin, { age: i }),
        call(base, 'POST', '/message', admin, { personId: id, text: `hello ${i}` }),
        ...(previous === undefined ? [] : [call(base, 'PUT', `/person/${id}/friends/${previous}`, admin)])
      ]
      for (const step of await Promise.all(steps)) if (step.status >= 300) failures.push(`${step.status} ${step.text}`)
      previous = id
    }
  }
  const writers = Promise.all(instances.flatMap((base) => Array.from({ length: LANES_PER_INSTANCE }, (_, n) => lane(base, n))))
    .finally(() => { writing = false })

  // The consumer: pages of 50, waiting up to a second when caught up, each page through the other instance.
  const seen: Event[] = []
  let path = '/events?limit=50&wait=1'
  let reads = 0
  for (;;) {
    const done = !writing
    const page = await call(instances[reads++ % 2]!, 'GET', path, admin)
    t.equal(page.status, 200, 'a page') || t.bailout(page.text)
    seen.push(...page.json() as Event[])
    path = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')![1]!
    if (done && (page.json() as Event[]).length === 0) break
  }
  await writers
  t.same(failures, [], 'every write succeeded')

  const handle = createDatabase({ url: database.url, poolSize: 1 })
  t.teardown(() => handle.close())
  const rows = await handle.db.selectFrom('event').select(['id', 'position']).orderBy('position').execute()
  const expected = 2 * LANES_PER_INSTANCE * (CHANGES_PER_LANE * 4 - 1)
  t.ok(rows.length >= expected, `the table holds every change (${rows.length})`)
  t.equal(new Set(seen.map((e) => e.id)).size, seen.length, 'no event seen twice')
  t.same(seen.map((e) => e.id), rows.map((r) => r.id), 'the consumer saw the table, in position order')
  t.ok(reads > 2, `the consumer read while the writers wrote (${reads} pages)`)
})
