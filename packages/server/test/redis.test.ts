import t from 'tap'
import { connectRedis, openRedis } from '@people-service/infra'
import { skipWithoutRedis, testRedisUrl, type Teardown } from '@people-service/infra/testing'
import { ADMIN_PASSWORD, call, login, redisPrefix, start, tempDatabaseUrl } from './helper.js'

/** Two instances of one deployment: one database, one Redis, one key prefix; `settings` for both. */
const twoInstances = async (t: Teardown, settings: Record<string, string>) => {
  const REDIS_URL = await testRedisUrl()
  const prefix = await redisPrefix(t)
  const env = { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL, REDIS_KEY_PREFIX: prefix, ...settings }
  return { REDIS_URL, prefix, one: await start(t, env), two: await start(t, env) }
}

t.test('with REDIS_URL, two instances share one budget per caller, under the deployment\'s prefix', { skip: skipWithoutRedis }, async (t) => {
  const { one, two, REDIS_URL, prefix } = await twoInstances(t, { RATE_LIMIT_MAX: '3' })
  const admin = await login(one.url)
  const viewer = await call(one.url, 'POST', '/users', admin, { username: 'vera', password: 'vera has a long password', role: 'viewer' })
  t.equal(viewer.status, 201)
  const vera = await login(two.url, 'vera', 'vera has a long password')

  const seen = []
  for (const base of [one.url, two.url, one.url, two.url]) {
    const response = await call(base, 'GET', '/people', vera)
    seen.push(`${response.status}:${response.headers.get('ratelimit-remaining')}`)
  }
  t.same(seen, ['200:2', '200:1', '200:0', '429:0'], 'the budget is spent across both instances')
  const bystander = await call(two.url, 'GET', '/people', admin)
  t.equal(bystander.status, 200, 'another caller is unaffected')

  const client = openRedis(REDIS_URL)
  t.ok(await connectRedis(client))
  t.teardown(() => client.quit())
  const keys = await client.keys(`${prefix}*`)
  t.ok(keys.length > 0 && keys.every((key) => key.startsWith(prefix)), `counters live under the prefix: ${keys.join(', ')}`)
})

t.test('with REDIS_URL, a revocation on one instance holds on the next request to every other', { skip: skipWithoutRedis }, async (t) => {
  // A cache TTL of an hour: only the shared revocation version can explain a refusal.
  const { one, two } = await twoInstances(t, { API_KEY_CACHE_TTL_MS: '3600000' })
  const admin = await login(one.url)
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  for (let i = 0; i < 3; i++) t.equal((await call(two.url, 'GET', '/people', { 'x-api-key': key })).status, 200, 'cached on instance two')
  t.equal((await call(one.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200)
  const next = await call(two.url, 'GET', '/people', { 'x-api-key': key })
  t.equal(next.status, 401, 'refused by the other instance on the very next request')
})

/** Polls until `accepted` turns false; how long that took, or undefined if it never did within `limitMs`. */
const refusedWithin = async (limitMs: number, accepted: () => Promise<boolean>): Promise<number | undefined> => {
  const started = Date.now()
  while (Date.now() - started <= limitMs) {
    if (!await accepted()) return Date.now() - started
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return undefined
}

t.test('with REDIS_URL, an account change through one instance ends its credentials on the other within 5 s', { skip: skipWithoutRedis }, async (t) => {
  // A cache TTL of an hour: only the shared revocation version can explain a refusal.
  const { one, two } = await twoInstances(t, { API_KEY_CACHE_TTL_MS: '3600000' })
  const admin = await login(one.url)
  const password = 'eddie has a long password'
  const eddie = (await call(one.url, 'POST', '/users', admin, { username: 'eddie', password, role: 'editor' })).json()
  const token = await login(two.url, 'eddie', password)
  const key = { 'x-api-key': (await call(one.url, 'POST', '/api-keys', token, { name: 'k', scopes: ['people:read', 'people:write'] })).json().key }
  const works = async (headers: Record<string, string>) => (await call(two.url, 'GET', '/people', headers)).status === 200
  t.ok(await works(token) && await works(key), 'both work on instance two (and are cached there)')

  t.equal((await call(one.url, 'PATCH', `/users/${eddie.id}`, admin, { role: 'viewer' })).status, 200)
  const tokenGone = await refusedWithin(5000, () => works(token))
  t.ok(tokenGone !== undefined, `the token is refused on the other instance within 5 s (${tokenGone} ms)`)
  t.equal((await call(two.url, 'POST', '/person', key, { name: 'Ada' })).status, 403, 'the key lost people:write with its account')

  t.equal((await call(one.url, 'PATCH', `/users/${eddie.id}`, admin, { disabled: true })).status, 200)
  const keyGone = await refusedWithin(5000, () => works(key))
  t.ok(keyGone !== undefined, `the key of the disabled account is refused on the other instance within 5 s (${keyGone} ms)`)
})

t.test('with REDIS_URL, one account\'s keys share its budget across instances', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, { RATE_LIMIT_MAX: '5' })
  const admin = await login(one.url)
  const password = 'eddie has a long password'
  t.equal((await call(one.url, 'POST', '/users', admin, { username: 'eddie', password, role: 'editor' })).status, 201)
  const eddie = await login(one.url, 'eddie', password)
  // Two of the account's five go on making the keys.
  const keys = []
  for (const base of [one.url, two.url]) keys.push({ 'x-api-key': (await call(base, 'POST', '/api-keys', eddie, { name: 'k' })).json().key })
  const seen = []
  for (const [base, key] of [[one.url, keys[0]], [two.url, keys[1]], [two.url, keys[0]], [one.url, keys[1]]] as const) {
    const response = await call(base, 'GET', '/people', key!)
    seen.push(`${response.status}:${response.headers.get('ratelimit-limit')}:${response.headers.get('ratelimit-remaining')}`)
  }
  t.same(seen, ['200:5:2', '200:5:1', '200:5:0', '429:5:0'], 'the account\'s budget is spent through both keys on both instances')
  t.equal((await call(two.url, 'GET', '/people', eddie)).status, 429, 'and the account\'s own token finds it spent')
  t.equal((await call(two.url, 'GET', '/people', admin)).status, 200, 'another account is unaffected')
})

t.test('with REDIS_URL, GraphQL operations charge their cost to one budget across instances', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, { RATE_LIMIT_MAX: '40' })
  const admin = await login(one.url)
  const graphql = async (base: string, query: string) => {
    const response = await call(base, 'POST', '/graphql', admin, { query })
    const { extensions } = response.json() as { extensions?: unknown }
    return { status: response.status, remaining: response.headers.get('ratelimit-remaining'), extensions }
  }
  // 100 people and 10 friends each: 1,100, 11 requests.
  const friends = '{ people(limit: 100) { friends(limit: 10) { name } } }'
  // One write (100) + 100 + 100·30 = 3,200: 32 requests.
  const costly = 'mutation { createPerson(input: { name: "Eve" }) { friends(limit: 100) { friends(limit: 30) { id } } } }'
  t.same(await graphql(one.url, friends), { status: 200, remaining: '29', extensions: { cost: { requested: 1100, charged: 11 } } })
  t.same(await graphql(two.url, costly), { status: 429, remaining: '28', extensions: { cost: { requested: 3200, charged: 1 } } },
    'the other instance sees what the first charged: 28 left after reading it, 31 more cannot be paid')
  t.same(await graphql(two.url, friends), { status: 200, remaining: '17', extensions: { cost: { requested: 1100, charged: 11 } } })
  t.same(await graphql(one.url, friends), { status: 200, remaining: '6', extensions: { cost: { requested: 1100, charged: 11 } } })
  t.equal((await graphql(two.url, friends)).status, 429, 'six left cannot pay eleven')
  t.same((await call(one.url, 'GET', '/people', admin)).json(), [], 'the refused mutation never ran: no Eve')
})

t.test('with REDIS_URL, failed logins count across instances and successful ones do not count as failures', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, { LOGIN_RATE_LIMIT_MAX: '2' })
  const attempt = async (base: string, password: string) => (await call(base, 'POST', '/auth/login', {}, { username: 'admin', password })).status
  const statuses = []
  for (const base of [one.url, two.url, one.url, two.url]) statuses.push(await attempt(base, ADMIN_PASSWORD))
  t.same(statuses, [200, 200, 200, 200], 'twice the budget of successes')
  t.same([await attempt(one.url, 'wrong guess one'), await attempt(two.url, 'wrong guess two'), await attempt(one.url, ADMIN_PASSWORD)], [401, 401, 429],
    'two failures, one on each instance, spend the budget of both')
})

t.test('with REDIS_URL, a burst of parallel guesses over two instances gets no more password checks than the failures allowed', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, { LOGIN_RATE_LIMIT_MAX: '3' })
  const vera = { username: 'vera', password: 'vera has a long password' }
  t.equal((await call(one.url, 'POST', '/users', await login(one.url), { ...vera, role: 'viewer' })).status, 201)
  const on = (i: number) => (i % 2 === 0 ? one.url : two.url)
  const attempts = async (count: number, body: (i: number) => { username: string, password: string }) =>
    (await Promise.all(Array.from({ length: count }, (_, i) => call(on(i), 'POST', '/auth/login', {}, body(i))))).map((response) => response.status).sort()

  // Twenty at once, ten on each instance: a guess still being checked on one
  // instance counts on the other, so three are checked and seventeen refused.
  t.same(await attempts(20, (i) => ({ username: 'admin', password: `guess ${i}` })), [...Array<number>(3).fill(401), ...Array<number>(17).fill(429)])
  t.equal((await call(two.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })).status, 429, 'the budget is spent on both')

  // Successes, three at a time over both, never count: the failures allowed are all still there.
  for (let round = 0; round < 3; round++) t.same(await attempts(3, () => vera), [200, 200, 200], `round ${round}`)
  t.same(await attempts(4, (i) => ({ ...vera, password: `wrong ${i}` })), [401, 401, 401, 429])
})

t.test('with REDIS_URL, an attempt still running on another instance holds its place for LOGIN_RUNNING_MS at most', { skip: skipWithoutRedis }, async (t) => {
  const { one, REDIS_URL, prefix } = await twoInstances(t, { LOGIN_RATE_LIMIT_MAX: '2' })
  const client = openRedis(REDIS_URL)
  t.ok(await connectRedis(client))
  t.teardown(() => client.quit())
  const running = `${prefix}rate-limit:login:running:username:admin`
  const attempt = async () => (await call(one.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })).status
  t.equal((await call(one.url, 'POST', '/auth/login', {}, { username: 'admin', password: 'a wrong guess at it' })).status, 401, 'one of two failures spent')
  const [[seconds, micros]] = [await client.time()]
  const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000)
  // Another instance's attempt, begun 9 s ago: still running as far as anyone knows.
  await client.zadd(running, redisNow - 9_000, 'elsewhere')
  const held = await call(one.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })
  t.same([held.status, held.headers.get('retry-after')], [429, '1'], 'the other place is held, by an attempt that ends soon: not the window\'s 15 minutes')
  // Begun 11 s ago: its end never came (an instance that died); it no longer counts.
  await client.zadd(running, redisNow - 11_000, 'elsewhere')
  t.equal(await attempt(), 200)
  t.same(await client.zrange(running, 0, -1), [], 'dropped, and this attempt gone once it ended')
  t.equal(await client.get(`${prefix}rate-limit:login:username:admin`), '1', 'and no failure counted but the wrong guess')
})

t.test('without Redis, other instances honour a revocation within API_KEY_CACHE_TTL_MS', async (t) => {
  const env = { DATABASE_URL: tempDatabaseUrl(t), API_KEY_CACHE_TTL_MS: '500' }
  const one = await start(t, env)
  const two = await start(t, env)
  const admin = await login(one.url)
  const { id, key } = (await call(one.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  t.equal((await call(two.url, 'GET', '/people', { 'x-api-key': key })).status, 200)
  await call(one.url, 'DELETE', `/api-keys/${id}`, admin)
  t.equal((await call(one.url, 'GET', '/people', { 'x-api-key': key })).status, 401, 'at once on the instance that revoked it')
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal((await call(two.url, 'GET', '/people', { 'x-api-key': key })).status, 401, 'after the TTL on the others')
})

t.test('Redis unreachable: requests are served without limits, failed logins are limited in process, a warning is logged, revocations still hold', async (t) => {
  // Port 1 on loopback: nothing listens, connections are refused at once.
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_MAX: '2', LOGIN_RATE_LIMIT_MAX: '1' })
  t.ok(server.logs.some((line) => line.includes('REDIS_URL does not answer')), 'the start says so')
  const admin = await login(server.url)
  t.ok(await login(server.url), 'a success is not counted as a failure')
  const guess = async () => (await call(server.url, 'POST', '/auth/login', {}, { username: 'admin', password: 'a wrong guess at it' })).status
  t.same([await guess(), await guess()], [401, 429], 'failed logins are counted in process meanwhile: a budget of 1')
  for (let i = 0; i < 4; i++) {
    const response = await call(server.url, 'GET', '/people', admin)
    t.equal(response.status, 200, `request ${i + 1} over a budget of 2 is still served`)
    t.equal(response.headers.get('ratelimit-limit'), null, 'no budget is claimed that is not being counted')
  }
  t.equal(server.logs.filter((line) => line.includes('rate-limit store unavailable')).length, 1, 'one warning, not one per request')
  t.equal((await call(server.url, 'GET', '/people', {})).status, 401, 'authentication is never skipped')
  const { id, key } = (await call(server.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  t.equal((await call(server.url, 'GET', '/people', { 'x-api-key': key })).status, 200)
  t.equal((await call(server.url, 'DELETE', `/api-keys/${id}`, admin)).status, 200, 'revoking works without Redis')
  t.equal((await call(server.url, 'GET', '/people', { 'x-api-key': key })).status, 401, 'keys are read from the database while the version is unreadable')
  t.ok(server.logs.some((line) => line.includes('key revocations unreadable')))
  const person = (await call(server.url, 'POST', '/person', admin, { name: 'Ada' })).json()
  const started = Date.now()
  t.equal((await call(server.url, 'POST', '/message', admin, { personId: person.id, text: 'hi' })).status, 201, 'a message is sent although subscribers cannot be told')
  t.ok(Date.now() - started < 2000, 'without waiting on Redis')
})

t.test('Redis going away and coming back: served meanwhile, shared limits again once it returns', { skip: skipWithoutRedis }, async (t) => {
  const { tcpProxy } = await import('./tcp-proxy.js')
  const target = new URL(await testRedisUrl())
  const proxy = await tcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
  t.teardown(() => proxy.close())
  const viaProxy = new URL(target)
  viaProxy.host = `127.0.0.1:${proxy.port}`
  const server = await start(t, {
    DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: viaProxy.href, REDIS_KEY_PREFIX: await redisPrefix(t), RATE_LIMIT_MAX: '1000'
  })
  const admin = await login(server.url)
  const before = await call(server.url, 'GET', '/people', admin)
  t.equal(before.status, 200)
  t.equal(before.headers.get('ratelimit-limit'), '1000', 'counted in Redis')

  await proxy.cut()
  const started = Date.now()
  const during = await call(server.url, 'GET', '/people', admin)
  t.equal(during.status, 200, 'still served while Redis is away')
  t.ok(Date.now() - started < 3000, `without waiting on Redis (${Date.now() - started} ms)`)
  const person = (await call(server.url, 'POST', '/person', admin, { name: 'Ada' })).json()
  t.equal((await call(server.url, 'POST', '/message', admin, { personId: person.id, text: 'hi' })).status, 201, 'messages are sent')

  await proxy.restore()
  let counted = false
  for (let i = 0; i < 60 && !counted; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    counted = (await call(server.url, 'GET', '/people', admin)).headers.get('ratelimit-limit') === '1000'
  }
  t.ok(counted, 'the budget is counted in Redis again once it is back')
})
