import { PeopleServiceClient, PeopleServiceError } from '@people-service/client'
import type { Teardown } from '@people-service/infra/testing'
import t from 'tap'
import { flakyProxy, type Fault, type Seen } from './flaky-proxy.js'
import { adminClient, adminToken, collect, recordingFetch, startService, type Sent } from './helper.js'

/*
 * Retries against the real server (SQLite, real port), with a proxy in front
 * that refuses or cuts chosen requests: what is retried, how often, after how
 * long, and that nothing is made twice.
 */

const service = await startService(t)
const admin = await adminClient(service.url)
const accessToken = await adminToken(service.url)

/** A client logged in as admin that talks to the service through a proxy doing `plan`. */
const throughProxy = async (t: Teardown, plan: (request: Seen, index: number) => Fault, options: { maxAttempts?: number, maxRetryDelayMs?: number, timeoutMs?: number } = {}) => {
  const proxy = await flakyProxy(t, service.url, plan)
  const client = new PeopleServiceClient({ baseUrl: proxy.url, accessToken, baseRetryDelayMs: 10, ...options })
  return { client, seen: proxy.seen }
}

const peopleNamed = async (name: string) => (await collect(admin.people.list({ name }))).filter((p) => p.name === name)

/** Fails a request matching `method path` the first `times` times it comes, with `fault`. */
const firstTimes = (method: string, path: string, times: number, fault: Fault) => {
  let left = times
  return (request: Seen): Fault => {
    if (request.method !== method || request.path !== path || left === 0) return 'forward'
    left--
    return fault
  }
}

t.test('a create answered 503 is sent again after Retry-After with the same Idempotency-Key: one person', async (t) => {
  const { client, seen } = await throughProxy(t, firstTimes('POST', '/person', 1, { status: 503, retryAfter: '1' }))
  const started = Date.now()
  const person = await client.people.create({ name: 'Retried after 503' })
  t.ok(Date.now() - started >= 950, 'waited the second Retry-After asked for')
  t.equal(person.lastResponse.statusCode, 201)
  t.same(seen.map((s) => s.method), ['POST', 'POST'])
  t.equal(seen[0]?.upstreamStatus, undefined, 'the first never reached the service')
  t.equal(seen[1]?.upstreamStatus, 201)
  t.match(seen[0]?.headers['idempotency-key'], /\S/)
  t.equal(seen[1]?.headers['idempotency-key'], seen[0]?.headers['idempotency-key'], 'the same key on the retry')
  t.equal((await peopleNamed('Retried after 503')).length, 1)
})

t.test('a create whose answer is lost is sent again and gets the stored 201, replayed: one person', async (t) => {
  const { client, seen } = await throughProxy(t, firstTimes('POST', '/person', 1, 'cut-after'))
  const person = await client.people.create({ name: 'Answer lost once' })
  t.equal(seen[0]?.upstreamStatus, 201, 'the service made the person the first time')
  t.equal(seen[1]?.upstreamStatus, 201)
  t.equal(person.lastResponse.statusCode, 201)
  t.ok(person.lastResponse.replayed, 'Idempotent-Replayed: the first answer again')
  t.equal(person.lastResponse.location, `/person/${person.id}`)
  t.same(await admin.people.get(person.id), person)
  t.equal((await peopleNamed('Answer lost once')).length, 1, 'nothing made twice')
})

t.test('a message whose answer is lost is sent once', async (t) => {
  const to = await admin.people.create({ name: 'Inbox of one' })
  const { client, seen } = await throughProxy(t, firstTimes('POST', '/message', 2, 'cut-after'))
  const message = await client.messages.send({ personId: to.id, text: 'exactly once' })
  t.same(seen.map((s) => s.upstreamStatus), [201, 201, 201], 'three attempts, each answered by the service')
  t.equal(new Set(seen.map((s) => s.headers['idempotency-key'])).size, 1, 'one key for all three')
  t.ok(message.lastResponse.replayed)
  t.same((await collect(admin.people.inbox(to.id))).map((m) => m.id), [message.id])
})

t.test('a caller\'s own Idempotency-Key makes a later repeat safe too', async (t) => {
  const first = await admin.people.create({ name: 'Keyed by the caller' }, { idempotencyKey: 'order-4711' })
  const again = await admin.people.create({ name: 'Keyed by the caller' }, { idempotencyKey: 'order-4711' })
  t.equal(again.id, first.id)
  t.ok(again.lastResponse.replayed)
  const reused = await admin.people.create({ name: 'Another body' }, { idempotencyKey: 'order-4711' }).catch((error: unknown) => error) as PeopleServiceError
  t.equal(reused.statusCode, 422)
  t.equal(reused.code, 'IDEMPOTENCY_KEY_REUSED')
})

t.test('409 IDEMPOTENCY_KEY_IN_USE (the first still runs) is waited out', async (t) => {
  const { client, seen } = await throughProxy(t, firstTimes('POST', '/person', 1, { status: 409, retryAfter: '0', code: 'IDEMPOTENCY_KEY_IN_USE' }))
  const person = await client.people.create({ name: 'After a conflict' })
  t.equal(person.lastResponse.statusCode, 201)
  t.equal(seen.length, 2)
})

t.test('a create whose answer does not come in time is sent again with its key, and gets the first answer', async (t) => {
  const { client, seen } = await throughProxy(t, firstTimes('POST', '/person', 1, 'hold-after'), { timeoutMs: 500 })
  const started = Date.now()
  const person = await client.people.create({ name: 'Slow answer' })
  t.ok(Date.now() - started >= 450, 'the first attempt timed out')
  t.same(seen.map((s) => s.upstreamStatus), [201, 201])
  t.ok(person.lastResponse.replayed)
  t.equal((await peopleNamed('Slow answer')).length, 1)
})

t.test('an update that times out is not sent again', async (t) => {
  const ada = await admin.people.create({ name: 'Slow update' })
  const { client, seen } = await throughProxy(t, firstTimes('PATCH', `/person/${ada.id}`, 1, 'hold-after'), { timeoutMs: 300 })
  const error = await client.people.update(ada.id, { age: 41 }).catch((error: unknown) => error) as PeopleServiceError
  t.equal(error.statusCode, 0)
  t.equal(error.code, 'TIMEOUT')
  t.equal(seen.length, 1)
})

t.test('Retry-After as an HTTP date is waited for too', async (t) => {
  const { client, seen } = await throughProxy(t, (request, index) => index === 0 ? { status: 429, retryAfter: new Date(Date.now() + 2_000).toUTCString() } : 'forward')
  const started = Date.now()
  t.equal((await client.people.create({ name: 'After a date' })).lastResponse.statusCode, 201)
  // An HTTP date has whole seconds: the wait is between one and two of them.
  t.ok(Date.now() - started >= 900, `waited ${Date.now() - started} ms`)
  t.equal(seen.length, 2)
})

t.test('an update whose connection fails is not sent again: it may have been done', async (t) => {
  const ada = await admin.people.create({ name: 'Not repeated' })
  const { client, seen } = await throughProxy(t, firstTimes('PATCH', `/person/${ada.id}`, 1, 'cut-after'))
  const error = await client.people.update(ada.id, { age: 40 }).catch((error: unknown) => error) as PeopleServiceError
  t.type(error, PeopleServiceError)
  t.equal(error.statusCode, 0)
  t.equal(error.code, 'NETWORK_ERROR')
  t.match(error.message, /not repeated/)
  t.equal(seen.length, 1, 'sent once')
  t.equal((await admin.people.get(ada.id)).age, 40, 'the service had done it')
})

t.test('a conditional delete whose answer is lost is not repeated: the repeat would be a false 412', async (t) => {
  const ada = await admin.people.create({ name: 'Deleted once' })
  const { client, seen } = await throughProxy(t, firstTimes('DELETE', `/person/${ada.id}`, 1, 'cut-after'))
  const error = await client.people.delete(ada.id, { ifMatch: ada.lastResponse.etag }).catch((error: unknown) => error) as PeopleServiceError
  t.equal(error.code, 'NETWORK_ERROR')
  t.same(seen.map((s) => s.upstreamStatus), [200], 'sent once, and done')
  const unconditional = await admin.people.create({ name: 'Deleted without a condition' })
  const again = await throughProxy(t, firstTimes('DELETE', `/person/${unconditional.id}`, 1, 'cut-after'))
  const repeated = await again.client.people.delete(unconditional.id).catch((error: unknown) => error) as PeopleServiceError
  t.equal(repeated.statusCode, 404, 'DELETE is idempotent: repeated, and the person is already gone')
  t.same(again.seen.map((s) => s.upstreamStatus), [200, 404])
})

t.test('reads and idempotent writes are sent again after a failed connection', async (t) => {
  const ada = await admin.people.create({ name: 'Read twice' })
  const bob = await admin.people.create({ name: 'Befriended twice' })
  const { client, seen } = await throughProxy(t, (request, index) => index < 2 ? 'cut-before' : 'forward')
  t.equal((await client.people.get(ada.id)).name, 'Read twice')
  t.same(seen.map((s) => s.method), ['GET', 'GET', 'GET'])
  const proxy = await flakyProxy(t, service.url, firstTimes('PUT', `/person/${ada.id}/friends/${bob.id}`, 1, 'cut-after'))
  const befriending = new PeopleServiceClient({ baseUrl: proxy.url, accessToken, baseRetryDelayMs: 10 })
  t.same(await befriending.people.befriend(ada.id, bob.id), { personId: ada.id, friendId: bob.id })
  t.same(proxy.seen.filter((s) => s.method === 'PUT').map((s) => s.upstreamStatus), [200, 200], 'PUT is idempotent: sent again')
})

t.test('attempts are bounded: after the last, the last answer is the error', async (t) => {
  const { client, seen } = await throughProxy(t, (request) => request.method === 'POST' ? { status: 503, retryAfter: '0' } : 'forward', { maxAttempts: 4 })
  const error = await client.people.create({ name: 'Never made' }).catch((error: unknown) => error) as PeopleServiceError
  t.type(error, PeopleServiceError)
  t.equal(error.statusCode, 503)
  t.equal(error.requestId, 'proxy-4', 'the fourth answer')
  t.equal(seen.length, 4)
  t.equal(new Set(seen.map((s) => s.headers['idempotency-key'])).size, 1)
  t.same(await peopleNamed('Never made'), [])
})

t.test('a Retry-After longer than the client will wait fails at once', async (t) => {
  const { client, seen } = await throughProxy(t, () => ({ status: 503, retryAfter: '120' }), { maxRetryDelayMs: 5_000 })
  const started = Date.now()
  const error = await client.people.get('anyone').catch((error: unknown) => error) as PeopleServiceError
  t.equal(error.statusCode, 503)
  t.equal(seen.length, 1)
  t.ok(Date.now() - started < 2_000, 'no waiting')
})

t.test('429 from the service\'s own rate limit is waited out', async (t) => {
  const limited = await startService(t, { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '1500' })
  const sent: Sent[] = []
  const client = await adminClient(limited.url, { fetch: recordingFetch(sent), maxAttempts: 5 })
  for (let i = 0; i < 5; i++) t.equal((await client.people.create({ name: `Limited ${i}` })).lastResponse.statusCode, 201)
  t.ok(sent.length > 5, `some were refused and sent again (${sent.length} requests for 5)`)
  const keys = sent.map((s) => s.headers['idempotency-key'])
  t.equal(new Set(keys).size, 5, 'one key per person, kept across its retries')
  t.equal((await collect(client.people.list())).filter((p) => p.name.startsWith('Limited')).length, 5)
})
