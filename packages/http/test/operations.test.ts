import t from 'tap'
import { createInMemoryPorts, fastPasswordHasher } from '@people-service/domain/testing'
import { buildApp } from '@people-service/http'
import type { Teardown } from '@people-service/infra/testing'
import { build, TEST_JWT_SECRET } from './helper.js'

t.test('the OpenAPI document is generated from the routes and lists exactly the API', async (t) => {
  const { api } = await build(t)
  const res = await api.inject('/openapi.json')
  t.equal(res.statusCode, 200)
  const doc = res.json() as { openapi: string, paths: Record<string, Record<string, unknown>>, components: { schemas: Record<string, unknown> } }
  t.match(doc.openapi, /^3\./)
  const operations = Object.entries(doc.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`)).sort()
  t.same(operations, [
    'DELETE /api-keys/{id}', 'DELETE /person/{id}', 'DELETE /person/{id}/friends/{friendId}',
    'GET /api-keys', 'GET /api-keys/{id}/usage', 'POST /api-keys', 'POST /auth/login', 'POST /auth/password',
    'POST /users', 'GET /users', 'GET /users/me', 'PATCH /users/{id}', 'DELETE /users/{id}',
    'GET /graphql', 'GET /health/live', 'GET /health/ready', 'GET /message/{id}', 'GET /people',
    'GET /person/{id}', 'GET /person/{id}/friends', 'GET /person/{id}/messages',
    'PATCH /person/{id}', 'POST /graphql', 'POST /message', 'POST /person', 'POST /person/{id}',
    'PUT /person/{id}', 'PUT /person/{id}/friends/{friendId}',
    'GET /openapi.json', 'GET /docs', 'GET /graphiql', 'GET /metrics', 'GET /events', 'GET /', 'GET /favicon.ico',
    'POST /webhooks', 'GET /webhooks', 'GET /webhooks/{id}', 'PATCH /webhooks/{id}', 'DELETE /webhooks/{id}',
    'GET /webhooks/{id}/deliveries', 'POST /webhooks/{id}/deliveries/{deliveryId}/retry'
  ].sort(), 'no 405 helpers, no asset routes')
  t.ok(doc.components.schemas.Person, 'shared schemas are named components')
  const docs = await api.inject('/docs')
  t.equal(docs.statusCode, 200)
  t.match(docs.headers['content-type'], /text\/html/)
})

t.test('GET /metrics speaks Prometheus: requests by route pattern and status, latency, pool', async (t) => {
  const { api } = await build(t, { metrics: { poolStats: () => ({ total: 4, idle: 3, waiting: 0 }) } })
  await api.inject('/person/01a1fe78-fcb4-7000-a350-7afc4e244c67')
  await api.inject('/people')
  await api.inject('/openapi.json')
  const res = await api.inject('/metrics')
  t.equal(res.statusCode, 200)
  t.match(res.headers['content-type'], /text\/plain/)
  t.match(res.body, /http_request_duration_seconds_bucket\{[^}]*route="\/person\/:id"[^}]*status_code="404"/)
  t.match(res.body, /http_request_duration_seconds_count\{[^}]*route="\/people"[^}]*status_code="200"[^}]*\} 1/)
  t.match(res.body, /http_request_duration_seconds_count\{[^}]*route="\/openapi.json"[^}]*status_code="200"[^}]*\} 1/, 'the routes of plugins too')
  t.notMatch(res.body, /01a1fe78/, 'ids never become labels')
  t.match(res.body, /database_pool_connections\{state="idle"\} 3/)
})

t.test('GET /metrics: each series counts its own requests, by method, route pattern and status; probes, HEAD and unknown paths are not counted', async (t) => {
  const { api } = await build(t)
  for (let i = 0; i < 3; i++) await api.inject('/people')
  await api.inject({ method: 'HEAD', url: '/people' })
  await api.inject('/health/live')
  await api.inject('/nowhere/at/all')
  await api.inject({ method: 'POST', url: '/person', payload: { name: 'Ada' } })
  await api.inject({ method: 'POST', url: '/person', payload: { name: 'Ada', age: 'old' } })
  const body = (await api.inject('/metrics')).body
  const series = (labels: string) => body.split('\n').filter((line) => line.startsWith('http_request_duration_seconds') && line.includes(labels))
  const people = series('method="GET",route="/people",status_code="200"')
  t.match(people.find((line) => line.startsWith('http_request_duration_seconds_count')), / 3$/, 'three GETs, the HEAD not among them')
  t.match(people.find((line) => line.includes('le="+Inf"')), / 3$/)
  const buckets = people.filter((line) => line.startsWith('http_request_duration_seconds_bucket')).map((line) => Number(line.split(' ').pop()))
  t.equal(buckets.length, 12, 'eleven bounds and +Inf')
  t.same(buckets, [...buckets].sort((a, b) => a - b), 'cumulative')
  t.ok(people.some((line) => line.startsWith('http_request_duration_seconds_sum')))
  t.match(series('method="POST",route="/person",status_code="201"').find((line) => line.includes('_count')), / 1$/)
  t.match(series('method="POST",route="/person",status_code="400"').find((line) => line.includes('_count')), / 1$/)
  t.notMatch(body, /method="HEAD"|\/health\/live|\/nowhere/, 'not counted')
})

t.test('GET /metrics: the methods a path does not offer (405) are counted as one, other', async (t) => {
  const { app, api } = await build(t)
  for (const method of ['DELETE', 'PUT', 'PROPFIND', 'MKCOL', 'PATCH'] as const) {
    t.equal((await api.inject({ method, url: '/people' })).statusCode, 405, method)
  }
  await app.inject({ method: 'PROPFIND', url: '/people' })
  const body = (await api.inject('/metrics')).body
  const people = body.split('\n').filter((line) => line.startsWith('http_request_duration_seconds_count') && line.includes('route="/people"'))
  t.match(people, [/method="other",route="\/people",status_code="405"\} 5$/, /method="other",route="\/people",status_code="401"\} 1$/], 'one series a status, for any method')
  t.equal(people.length, 2)
})

t.test('security headers on every response, errors included', async (t) => {
  const { api } = await build(t)
  for (const url of ['/people', '/nowhere']) {
    const res = await api.inject(url)
    t.equal(res.headers['x-content-type-options'], 'nosniff', url)
    t.equal(res.headers['x-frame-options'], 'SAMEORIGIN', url)
    t.ok(res.headers['strict-transport-security'], url)
  }
})

t.test('CORS: configured origins only, never a wildcard', async (t) => {
  const { api } = await build(t, { corsOrigins: ['https://app.example.org'] })
  const preflight = (origin: string) => api.inject({ method: 'OPTIONS', url: '/people', headers: { origin, 'access-control-request-method': 'GET' } })
  const allowed = await preflight('https://app.example.org')
  t.equal(allowed.statusCode, 204)
  t.equal(allowed.headers['access-control-allow-origin'], 'https://app.example.org')
  const denied = await preflight('https://evil.example')
  t.equal(denied.headers['access-control-allow-origin'], undefined)
  t.equal(denied.statusCode, 405)
  const plain = await api.inject({ url: '/people', headers: { origin: 'https://app.example.org' } })
  t.equal(plain.headers['access-control-allow-origin'], 'https://app.example.org')
  const none = await build(t)
  t.equal((await none.api.inject({ url: '/people', headers: { origin: 'https://app.example.org' } })).headers['access-control-allow-origin'], undefined, 'off unless configured')
})

/**
 * An app that sheds load once its event loop lags `maxEventLoopDelay` ms (0:
 * never), built without the helper's login: starting an app can itself hold
 * the loop for a moment, and the point is the requests made under load.
 * `underLoad` keeps the loop busy 60 ms at a time, again and again, while
 * `during` runs, once the monitor has had time to see it.
 */
const pressured = async (t: Teardown, maxEventLoopDelay: number, ready?: () => Promise<boolean>) => {
  const app = await buildApp({
    ports: createInMemoryPorts({ passwords: fastPasswordHasher() }),
    access: { tokens: { secret: TEST_JWT_SECRET } },
    pressure: { maxEventLoopDelay, sampleInterval: 100 },
    ...(ready === undefined ? {} : { ready })
  })
  t.teardown(() => app.close())
  await app.ready()
  const underLoad = async <T>(during: () => Promise<T>): Promise<T> => {
    let hogging = true
    const hog = () => {
      const until = Date.now() + 60
      while (Date.now() < until) { /* busy */ }
      if (hogging) setImmediate(hog)
    }
    hog()
    try {
      await new Promise((resolve) => setTimeout(resolve, 400))
      return await during()
    } finally {
      hogging = false
    }
  }
  return { app, underLoad }
}

t.test('a saturated event loop turns requests away with 503 and Retry-After, but for the health probes', async (t) => {
  let databaseAnswers = true
  const { app, underLoad } = await pressured(t, 30, async () => databaseAnswers)
  await new Promise((resolve) => setTimeout(resolve, 250))
  t.equal((await app.inject('/health/live')).statusCode, 200, 'calm: served')
  // The probes are answered all the same: liveness refused under load would
  // have the instance restarted; readiness is whether the database answers.
  const [res, live, ready, notReady] = await underLoad(async () => {
    const answers = [await app.inject('/people'), await app.inject('/health/live'), await app.inject('/health/ready')] as const
    databaseAnswers = false
    return [...answers, await app.inject('/health/ready')] as const
  })
  t.equal(res.statusCode, 503)
  t.equal(res.headers['retry-after'], '5')
  t.match(res.json(), { statusCode: 503, code: 'OVERLOADED' })
  t.same([live.statusCode, live.json()], [200, { status: 'ok' }], 'liveness')
  t.same([ready.statusCode, ready.json()], [200, { status: 'ok' }], 'readiness (it had been 500)')
  t.same([notReady.statusCode, notReady.json()], [503, { status: 'unavailable' }], 'and not ready when the database does not answer, in the probe\'s own shape')
})

t.test('a delay of 0 switches load shedding off', async (t) => {
  const { app, underLoad } = await pressured(t, 0)
  t.equal((await underLoad(async () => app.inject('/people'))).statusCode, 401, 'answered, not shed')
})
