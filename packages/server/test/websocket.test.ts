import t from 'tap'
import WebSocket from 'ws'
import { call, login, redisPrefix, start, tempDatabaseUrl } from './helper.js'
import { skipWithoutRedis, testRedisUrl } from '@people-service/infra/testing'

/*
 * The WebSocket door as the composition root configures it: the server's
 * variables, and revocations shared through Redis.
 */

/** A graphql-transport-ws connection to `url` with `payload` as its credentials, acknowledged. */
const connect = async (t: { teardown(fn: () => unknown): void }, url: string, payload: Record<string, string>) => {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/graphql`, 'graphql-transport-ws')
  // terminate() throws on a socket that never opened.
  t.teardown(() => { if (socket.readyState !== WebSocket.CONNECTING) socket.terminate() })
  const messages: Array<{ type: string, id?: string, payload?: unknown }> = []
  socket.on('message', (data) => messages.push(JSON.parse(String(data)) as { type: string, id?: string, payload?: unknown }))
  const closed = new Promise<{ code: number, reason: string }>((resolve) => socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })))
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject) })
  socket.send(JSON.stringify({ type: 'connection_init', payload }))
  const deadline = Date.now() + 5000
  while (!messages.some((m) => m.type === 'connection_ack')) {
    if (Date.now() > deadline) throw new Error(`no connection_ack: ${JSON.stringify(messages)}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return { socket, messages, closed }
}

t.test('with REDIS_URL, a key deleted on one instance closes its connections on another, 4403 within 5 s', { skip: skipWithoutRedis }, async (t) => {
  const REDIS_URL = await testRedisUrl()
  // A cache TTL of an hour: only the shared revocation version can explain the close.
  // No 503s from a busy test machine's event loop: not what is tested here.
  const env = {
    DATABASE_URL: tempDatabaseUrl(t), REDIS_URL, REDIS_KEY_PREFIX: await redisPrefix(t), API_KEY_CACHE_TTL_MS: '3600000', MAX_EVENT_LOOP_DELAY_MS: '60000'
  }
  const one = await start(t, env)
  const two = await start(t, env)
  const admin = await login(one.url)
  const ada = (await call(one.url, 'POST', '/person', admin, { name: 'Ada' })).json()
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k', scopes: ['people:read'] })).json()

  const client = await connect(t, two.url, { 'x-api-key': key })
  client.socket.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query: 'subscription { messageSent { text } }' } }))
  // Live once a message sent through the first instance reaches it on the second.
  for (let attempt = 0; attempt < 50 && !client.messages.some((m) => m.type === 'next'); attempt++) {
    await call(one.url, 'POST', '/message', admin, { personId: ada.id, text: 'probe' })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.ok(client.messages.some((m) => m.type === 'next'), 'the subscription on instance two is live')

  const revokedAt = Date.now()
  t.equal((await call(one.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200)
  const outcome = await Promise.race([client.closed, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5000))])
  t.same(outcome, { code: 4403, reason: 'Forbidden' }, `closed on instance two ${Date.now() - revokedAt} ms after the key was deleted on instance one`)
})

t.test('with REDIS_URL, a revocation whose announcement never reached Redis still closes the connections of another instance within API_KEY_CACHE_TTL_MS and a second', { skip: skipWithoutRedis }, async (t) => {
  // Instance one cannot reach Redis (nothing listens where it looks), so
  // instance two never hears of its revocations: its connections had been
  // checked only when the shared version changed, and stayed open for good.
  const env = { DATABASE_URL: tempDatabaseUrl(t), API_KEY_CACHE_TTL_MS: '1000', MAX_EVENT_LOOP_DELAY_MS: '60000', REDIS_KEY_PREFIX: await redisPrefix(t) }
  const one = await start(t, { ...env, REDIS_URL: 'redis://127.0.0.1:9' })
  const two = await start(t, { ...env, REDIS_URL: await testRedisUrl() })
  const admin = await login(one.url)
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k', scopes: ['people:read'] })).json()
  const client = await connect(t, two.url, { 'x-api-key': key })
  client.socket.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query: 'subscription { messageSent { text } }' } }))
  const revokedAt = Date.now()
  t.equal((await call(one.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200)
  const outcome = await Promise.race([client.closed, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5000))])
  t.same(outcome, { code: 4403, reason: 'Forbidden' }, `closed on instance two ${Date.now() - revokedAt} ms after the key was deleted on instance one`)
  t.ok(Date.now() - revokedAt < 3_000, 'within the TTL and a second, and some slack')
})

t.test('without Redis, a credential revoked on one instance closes its connections on another, 4403 within API_KEY_CACHE_TTL_MS and a second', async (t) => {
  // Two instances on one SQLite file: neither hears the other's revocations,
  // and learns of them from the database once a cached credential is older
  // than the TTL. Such connections had stayed open, receiving, for good.
  const env = { DATABASE_URL: tempDatabaseUrl(t), API_KEY_CACHE_TTL_MS: '1000', MAX_EVENT_LOOP_DELAY_MS: '60000' }
  const one = await start(t, env)
  const two = await start(t, env)
  const admin = await login(one.url)
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k', scopes: ['people:read'] })).json()
  t.equal((await call(one.url, 'POST', '/users', admin, { username: 'vera', password: 'vera has a long password', role: 'viewer' })).status, 201)
  const vera = (await call(one.url, 'GET', '/users?limit=1000', admin)).json().find((a: { username: string }) => a.username === 'vera')
  const byKey = await connect(t, two.url, { 'x-api-key': key })
  const byToken = await connect(t, two.url, await login(two.url, 'vera', 'vera has a long password'))
  const subscription = JSON.stringify({ type: 'subscribe', id: '1', payload: { query: 'subscription { messageSent { text } }' } })
  for (const client of [byKey, byToken]) client.socket.send(subscription)

  const within = (closed: Promise<{ code: number, reason: string }>) =>
    Promise.race([closed, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5000))])
  let revokedAt = Date.now()
  t.equal((await call(one.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200)
  t.same(await within(byKey.closed), { code: 4403, reason: 'Forbidden' }, `the key's connection closed ${Date.now() - revokedAt} ms after the key was deleted on the other instance`)
  t.ok(Date.now() - revokedAt < 3_000, 'within the TTL and a second, and some slack')
  revokedAt = Date.now()
  t.equal((await call(one.url, 'PATCH', `/users/${vera.id}`, admin, { disabled: true })).status, 200)
  t.same(await within(byToken.closed), { code: 4403, reason: 'Forbidden' }, `the token's connection closed ${Date.now() - revokedAt} ms after its account was disabled on the other instance`)
  t.ok(Date.now() - revokedAt < 3_000)
})

t.test('without Redis, at the default settings: a key revoked on another instance closes its connection 4403 within the contract\'s 5 s', async (t) => {
  const env = { DATABASE_URL: tempDatabaseUrl(t), MAX_EVENT_LOOP_DELAY_MS: '60000' }
  const one = await start(t, env)
  const two = await start(t, env)
  const admin = await login(one.url)
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k', scopes: ['people:read'] })).json()
  const client = await connect(t, two.url, { 'x-api-key': key })
  client.socket.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query: 'subscription { messageSent { text } }' } }))
  // The worst case: instance two read the key from the database just before it was revoked.
  t.equal((await call(two.url, 'GET', '/people', { 'x-api-key': key })).status, 200)
  const revokedAt = Date.now()
  t.equal((await call(one.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200)
  const outcome = await Promise.race([client.closed, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), 5000))])
  t.same(outcome, { code: 4403, reason: 'Forbidden' }, `closed ${Date.now() - revokedAt} ms after the key was deleted on the other instance`)
})

t.test('with REDIS_URL, the events a subscription receives on one instance spend the budget every instance counts', { skip: skipWithoutRedis }, async (t) => {
  const env = { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: await testRedisUrl(), REDIS_KEY_PREFIX: await redisPrefix(t), MAX_EVENT_LOOP_DELAY_MS: '60000' }
  const one = await start(t, env)
  const two = await start(t, env)
  const admin = await login(one.url)
  const ada = (await call(one.url, 'POST', '/person', admin, { name: 'Ada' })).json()
  const { key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k', scopes: ['people:read'], rateLimit: 40 })).json()

  const client = await connect(t, two.url, { 'x-api-key': key })
  // The text (100), the message's person (1), 100 of their friends and 9 of each one's: 100 + 1 + 100·10 = 1,101, 12 requests.
  const query = 'subscription ($p: ID) { messageSent(personId: $p) { text person { friends(limit: 100) { friends(limit: 9) { name } } } } }'
  client.socket.send(JSON.stringify({ type: 'subscribe', id: '1', payload: { query, variables: { p: ada.id } } }))
  // Messages through instance one until the subscription on instance two is refused one.
  for (let attempt = 0; attempt < 50 && !client.messages.some((m) => m.type === 'error'); attempt++) {
    await call(one.url, 'POST', '/message', admin, { personId: ada.id, text: 'probe' })
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  t.equal(client.messages.filter((m) => m.type === 'next').length, 2, '40 - 1 for the connection - 12 for the subscribe: two events of 12 fit, not a third')
  t.match(client.messages.filter((m) => m.type === 'error'), [{
    id: '1',
    payload: [{ message: /^rate limit exceeded for this API key: 40 requests per 60 s; this costs 12 and 3 are left/, extensions: { code: 'RATE_LIMITED', retryAfter: Number } }]
  }], 'the subscription ends with the budget\'s error')
  const shown = await call(one.url, 'GET', '/people?limit=1', { 'x-api-key': key })
  t.equal(shown.headers.get('ratelimit-remaining'), '2', 'instance one counts what instance two charged: 3 left before this request')
})

t.test('GRAPHQL_MAX_SUBSCRIPTIONS caps the live subscriptions of one caller', async (t) => {
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), GRAPHQL_MAX_SUBSCRIPTIONS: '2', MAX_EVENT_LOOP_DELAY_MS: '60000' })
  const admin = await login(server.url)
  const client = await connect(t, server.url, admin)
  for (const id of ['1', '2', '3']) {
    client.socket.send(JSON.stringify({ type: 'subscribe', id, payload: { query: 'subscription { messageSent { text } }' } }))
  }
  const deadline = Date.now() + 5000
  while (!client.messages.some((m) => m.type === 'error') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  t.match(client.messages.filter((m) => m.type === 'error'), [{
    id: '3',
    payload: [{ message: 'this caller already has 2 live subscriptions on this instance; at most 2 are allowed', extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } }]
  }], 'the third is refused, the first two are not')
})
