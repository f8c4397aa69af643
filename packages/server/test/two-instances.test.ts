import { randomBytes } from 'node:crypto'
import { createClient } from 'graphql-ws'
import t from 'tap'
import WebSocket from 'ws'
import { createPostgresDatabase, skipWithoutRedis, testRedisUrl } from '@people-service/infra/testing'
import { redisPrefix } from './helper.js'
import { adminHeaders, startServerProcess } from './server-process.js'

/*
 * Two server processes against one PostgreSQL database and one Redis, as a
 * load balancer would see them: they must behave as one service.
 */
const call = async (url: string, headers: Record<string, string>, init: { method?: string, body?: unknown } = {}) => {
  const response = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { ...headers, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
  })
  return { status: response.status, headers: response.headers, body: await response.json() as Record<string, unknown> }
}

t.test('two instances on one PostgreSQL and one Redis behave as one service', { skip: skipWithoutRedis }, async (t) => {
  const database = await createPostgresDatabase('people_two')
  t.teardown(database.drop)
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: await testRedisUrl(),
    // Its own prefix, whose keys are deleted when the test ends.
    REDIS_KEY_PREFIX: await redisPrefix(t),
    JWT_SECRET: randomBytes(32).toString('base64url'),
    RATE_LIMIT_MAX: '40',
    RATE_LIMIT_WINDOW_MS: '60000',
    LOG_LEVEL: 'info'
  }
  // Started together, as replicas are: migrations and the first admin must not race.
  const [one, two] = await Promise.all([startServerProcess(t, env), startServerProcess(t, env)])

  await t.test('a person created through one is read through the other', async (t) => {
    const headers = await adminHeaders(one.url)
    const created = await call(`${one.url}/person`, headers, { method: 'POST', body: { name: 'Ada Lovelace' } })
    t.equal(created.status, 201)
    const read = await call(`${two.url}/person/${String(created.body.id)}`, headers)
    t.equal(read.status, 200)
    t.equal(read.body.name, 'Ada Lovelace')
  })

  await t.test('a token issued by one is accepted by the other', async (t) => {
    const fromOne = await adminHeaders(one.url)
    t.equal((await call(`${two.url}/people`, fromOne)).status, 200)
  })

  await t.test('a key revoked through one stops working on the other at once', async (t) => {
    const headers = await adminHeaders(one.url)
    const key = await call(`${one.url}/api-keys`, headers, { method: 'POST', body: { name: 'revoke me', scopes: ['people:read'] } })
    t.equal(key.status, 201)
    const keyHeaders = { 'x-api-key': String(key.body.key) }
    t.equal((await call(`${two.url}/people`, keyHeaders)).status, 200, 'the other instance knows the key (and caches it)')
    t.equal((await call(`${one.url}/api-keys/${String(key.body.id)}`, headers, { method: 'DELETE' })).status, 200)
    t.equal((await call(`${two.url}/people`, keyHeaders)).status, 401, 'refused on the very next request')
  })

  await t.test('a subscriber on one instance receives a message sent through the other', async (t) => {
    const headers = await adminHeaders(one.url)
    const ada = await call(`${one.url}/person`, headers, { method: 'POST', body: { name: 'Ada' } })
    const client = createClient({ url: `${two.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, connectionParams: headers })
    t.teardown(() => client.dispose())
    const received = new Promise<unknown>((resolve, reject) => {
      client.subscribe({ query: 'subscription ($p: ID) { messageSent(personId: $p) { text person { name } } }', variables: { p: ada.body.id } }, { next: resolve, error: reject, complete: () => {} })
    })
    // The subscription is live once the server has processed it; then send through the other instance.
    await new Promise((resolve) => setTimeout(resolve, 500))
    t.equal((await call(`${one.url}/message`, headers, { method: 'POST', body: { personId: ada.body.id, text: 'across instances' } })).status, 201)
    t.same(await received, { data: { messageSent: { text: 'across instances', person: { name: 'Ada' } } } })
  })

  await t.test("one caller's budget spans both instances", async (t) => {
    const headers = await adminHeaders(one.url)
    const key = await call(`${one.url}/api-keys`, headers, { method: 'POST', body: { name: 'budget', scopes: ['people:read'], rateLimit: 6 } })
    const keyHeaders = { 'x-api-key': String(key.body.key) }
    const statuses: number[] = []
    for (let i = 0; i < 4; i++) statuses.push((await call(`${one.url}/people`, keyHeaders)).status)
    for (let i = 0; i < 2; i++) statuses.push((await call(`${two.url}/people`, keyHeaders)).status)
    const over = await call(`${two.url}/people`, keyHeaders)
    t.same(statuses, [200, 200, 200, 200, 200, 200], 'six requests, split over both, within the budget of six')
    t.equal(over.status, 429, 'the seventh is over the shared budget')
    t.ok(over.headers.get('retry-after'), 'with Retry-After')
    t.equal(over.headers.get('ratelimit-limit'), '6')
  })

  await t.test('a password changed through one ends the account\'s tokens on the other within 5 s', async (t) => {
    const admin = await adminHeaders(one.url)
    const password = 'grace has a long password'
    const grace = await call(`${one.url}/users`, admin, { method: 'POST', body: { username: 'grace', password, role: 'viewer' } })
    t.equal(grace.status, 201)
    const login = await call(`${two.url}/auth/login`, {}, { method: 'POST', body: { username: 'grace', password } })
    const token = { authorization: `Bearer ${String(login.body.access_token)}` }
    t.equal((await call(`${two.url}/people`, token)).status, 200, 'the other instance knows the token (and caches its account)')
    const changed = await call(`${one.url}/users/${String(grace.body.id)}`, admin, { method: 'PATCH', body: { password: 'a new password for grace' } })
    t.equal(changed.status, 200)
    const started = Date.now()
    let status = 200
    while (status === 200 && Date.now() - started < 5000) {
      status = (await call(`${two.url}/people`, token)).status
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    t.equal(status, 401, `refused by the other instance within 5 s (${Date.now() - started} ms)`)
  })
})
