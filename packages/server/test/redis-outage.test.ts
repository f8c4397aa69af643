import t from 'tap'
import { connectRedis, openRedis } from '@people-service/infra'
import { ownRedisServer, skipWithoutRedisServer, type Teardown } from '@people-service/infra/testing'
import { ADMIN_PASSWORD, call, login, start, tempDatabaseUrl } from './helper.js'

/**
 * A Redis server of this test alone (pausing the one other tests share would
 * hold them too), with a way to hang it: SIGSTOP leaves its connections open
 * and unanswered, as a Redis that is swapping or behind a path that drops
 * packets does. The test always lets it go on and stops it, whatever happens.
 */
const ownRedis = async (t: Teardown) => {
  const server = await ownRedisServer()
  let paused = false
  const resume = (): void => {
    if (!paused) return
    paused = false
    process.kill(pid, 'SIGCONT')
  }
  // Even when the test's process ends before its teardown runs: a stopped
  // server would not heed the signal that ends it.
  process.once('exit', resume)
  t.teardown(async () => {
    resume()
    process.off('exit', resume)
    await server.stop()
  })
  // Its own process id, from Redis itself: the supervisor's shell stands in between.
  const client = openRedis(server.url)
  if (!await connectRedis(client)) throw new Error(`the test's own Redis does not answer: ${server.output()}`)
  const pid = Number(/process_id:(\d+)/.exec(await client.info('server'))?.[1])
  await client.quit()
  if (!Number.isInteger(pid) || pid <= 0) throw new Error('no process_id in INFO server')
  return {
    url: server.url,
    hang (): void {
      process.kill(pid, 'SIGSTOP')
      paused = true
    },
    resume,
    stop: () => server.stop()
  }
}

/** A request's status, its RateLimit-Limit and how long the answer took; no answer within 5 s is one too. */
const timed = async (base: string, method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
  const started = performance.now()
  try {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(5000)
    })
    await response.text()
    return { status: response.status, limit: response.headers.get('ratelimit-limit'), ms: Math.round(performance.now() - started) }
  } catch {
    return { status: 'no answer within 5 s', limit: null, ms: Math.round(performance.now() - started) }
  }
}

const guess = async (base: string, username: string) => (await timed(base, 'POST', '/auth/login', {}, { username, password: 'a wrong guess at it' })).status

t.test('a hung Redis holds no request: requests and logins answer within a second, logins stay limited, and Redis counts again once it answers', { skip: skipWithoutRedisServer }, async (t) => {
  const redis = await ownRedis(t)
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: redis.url, LOGIN_RATE_LIMIT_MAX: '2' })
  const admin = await login(server.url)
  const { key } = (await call(server.url, 'POST', '/api-keys', admin, { name: 'k' })).json()
  const person = (await call(server.url, 'POST', '/person', admin, { name: 'Ada' })).json()
  const before = await timed(server.url, 'GET', '/people', admin)
  t.same([before.status, before.limit], [200, '1000'], 'counted in Redis')

  redis.hang()
  const first = await timed(server.url, 'GET', '/people', admin)
  t.equal(first.status, 200, 'the first request once Redis hangs is served')
  t.ok(first.ms < 1000, `within a second (${first.ms} ms)`)
  const answers = {
    token: await timed(server.url, 'GET', '/people', admin),
    key: await timed(server.url, 'GET', '/people', { 'x-api-key': key }),
    graphql: await timed(server.url, 'POST', '/graphql', admin, { query: '{ people(limit: 1) { id } }' }),
    message: await timed(server.url, 'POST', '/message', admin, { personId: person.id, text: 'hi' }),
    login: await timed(server.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })
  }
  t.same(Object.values(answers).map(({ status }) => status), [200, 200, 200, 201, 200], 'a token, a key, GraphQL, a message sent and a login are all served')
  for (const [what, { ms }] of Object.entries(answers)) t.ok(ms < 1000, `${what}: within a second (${ms} ms)`)
  t.same([await guess(server.url, 'admin'), await guess(server.url, 'admin'), await guess(server.url, 'admin')], [401, 401, 429],
    'failed logins are still limited, on this instance')
  t.ok(server.logs.some((line) => line.includes('rate-limit store unavailable')), 'the rate-limit store is reported unavailable')
  t.ok(server.logs.some((line) => line.includes('key revocations unreadable')), 'and so is the revocation version')

  redis.resume()
  let back: Awaited<ReturnType<typeof timed>> | undefined
  for (let i = 0; i < 40 && back?.limit !== '1000'; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    back = await timed(server.url, 'GET', '/people', admin)
  }
  t.same([back?.status, back?.limit], [200, '1000'], 'requests are counted in Redis again once it answers')
  t.equal((await timed(server.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })).status, 200,
    'and logins are counted there again: the failures counted on this instance meanwhile are not carried over')
})

t.test('logins while Redis hangs leave no failure behind once it answers: a right password never counts as a wrong one', { skip: skipWithoutRedisServer }, async (t) => {
  const redis = await ownRedis(t)
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'hung:', LOGIN_RATE_LIMIT_MAX: '2' })
  t.equal((await call(server.url, 'POST', '/users', await login(server.url), { username: 'alice', password: 'alice has a long password', role: 'viewer' })).status, 201)
  const alice = async () => (await timed(server.url, 'POST', '/auth/login', {}, { username: 'alice', password: 'alice has a long password' })).status
  redis.hang()
  t.same([await alice(), await alice(), await alice()], [200, 200, 200], 'served, counted on this instance meanwhile')
  redis.resume()
  const client = openRedis(redis.url)
  t.ok(await connectRedis(client))
  t.teardown(() => client.quit())
  // Whatever Redis runs of what was sent while it hung, none of it is a failure.
  await new Promise((resolve) => setTimeout(resolve, 500))
  t.same(await client.mget('hung:rate-limit:login:username:alice', 'hung:rate-limit:login:address:127.0.0.1'), [null, null])
  // The attempt sent as Redis hung, before the connection was given up, is run
  // when it resumes: it holds a place as running, for 10 s at most.
  t.ok((await client.zcard('hung:rate-limit:login:running:username:alice')) <= 1, 'at most the one sent before the connection was dropped holds a place')
  t.equal(await alice(), 200, 'and alice logs in')
})

t.test('a failed login whose end cannot reach a hung Redis is counted on this instance, not lost', { skip: skipWithoutRedisServer }, async (t) => {
  const redis = await ownRedis(t)
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: redis.url, REDIS_KEY_PREFIX: 'lost:', LOGIN_RATE_LIMIT_MAX: '1' })
  const client = openRedis(redis.url)
  t.ok(await connectRedis(client))
  const pending = guess(server.url, 'admin')
  // Redis hangs once the guess is let in (running there) and while its password is checked.
  while (await client.zcard('lost:rate-limit:login:running:username:admin') === 0) await new Promise((resolve) => setTimeout(resolve, 1))
  client.disconnect()
  redis.hang()
  t.equal(await pending, 401)
  t.equal(await guess(server.url, 'admin'), 429, 'the budget of one failure is spent on this instance')
})

t.test('Redis killed: failed logins are still limited per username and per address, on each instance; budgets fail open', { skip: skipWithoutRedisServer }, async (t) => {
  const redis = await ownRedis(t)
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: redis.url, RATE_LIMIT_MAX: '2', LOGIN_RATE_LIMIT_MAX: '2' })
  const admin = await login(server.url)
  await redis.stop()

  const guesses = [await guess(server.url, 'admin'), await guess(server.url, 'admin'), await guess(server.url, 'admin')]
  t.same(guesses, [401, 401, 429], 'the third guess at one username is refused before its password is checked')
  const refused = await call(server.url, 'POST', '/auth/login', {}, { username: 'admin', password: 'a wrong guess at it' })
  t.ok(Number(refused.headers.get('retry-after')) > 0, 'with Retry-After')
  // Per address: 5 × 2 = 10 failures; two already spent on admin.
  const spread = []
  for (let i = 0; i < 9; i++) spread.push(await guess(server.url, `someone-${i}`))
  t.same(spread, [401, 401, 401, 401, 401, 401, 401, 401, 429], 'guessing across usernames from one address is refused past its budget')

  const served = []
  for (let i = 0; i < 4; i++) served.push((await timed(server.url, 'GET', '/people', admin)).status)
  t.same(served, [200, 200, 200, 200], 'request budgets fail open (as documented): twice a budget of 2 is served')
})
