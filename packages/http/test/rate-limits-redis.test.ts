import t from 'tap'
import { createInMemoryPorts, fastPasswordHasher, SETUP_ACTOR } from '@people-service/domain/testing'
import { connectRedis, openRedis, type Redis } from '@people-service/infra'
import { skipWithoutRedis, testRedisUrl, type Teardown } from '@people-service/infra/testing'
import { apiKeyOf, budgetOf, build, loginAs, PASSWORD, weightedRoutes } from './helper.js'

const redisClient = async (t: Teardown): Promise<Redis> => {
  const client = openRedis(await testRedisUrl())
  if (!await connectRedis(client)) throw new Error('the tests\' Redis does not answer')
  t.teardown(() => client.quit())
  return client
}

/**
 * Two instances of one deployment: the same accounts and keys, each app
 * with a Redis connection of its own, one key prefix (emptied at the end).
 */
const twoInstances = async (t: Teardown, max: number) => {
  const prefix = `people-service-test:${process.pid}:${Math.random().toString(36).slice(2)}:`
  const redis = await redisClient(t)
  t.teardown(async () => {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  })
  const ports = createInMemoryPorts({ passwords: fastPasswordHasher() })
  const instance = async () => (await build(t, {
    ports,
    access: { limits: { max, windowMs: 60_000, redis: await redisClient(t), redisPrefix: prefix } },
    extend: weightedRoutes
  })).app
  return { one: await instance(), two: await instance(), redis, prefix }
}

t.test('through Redis, two instances spend one budget in charges of several units, each whole or not at all', { skip: skipWithoutRedis }, async (t) => {
  const { one, two, redis, prefix } = await twoInstances(t, 10)
  const viewer = await loginAs(one, 'viewer')
  const charge = (app: typeof one, units: number) => app.inject({ method: 'GET', url: `/weighted/${units}`, headers: viewer })
  t.equal(budgetOf(await charge(one, 4)), '200 10/6')
  t.equal(budgetOf(await charge(two, 4)), '200 10/2', 'the other instance sees what the first charged')
  const refused = await charge(one, 3)
  t.equal(budgetOf(refused), '429 10/2')
  t.match(refused.json(), { code: 'RATE_LIMITED', message: /this costs 3 and 2 are left/ })
  const retryAfter = Number(refused.headers['retry-after'])
  t.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After ${retryAfter}`)
  t.equal(budgetOf(await charge(two, 2)), '200 10/0', 'the refused charge took nothing')
  t.equal((await two.inject({ method: 'GET', url: '/people', headers: viewer })).statusCode, 429)

  const caller = await one.access.authenticate({ authorization: viewer.authorization })
  const counter = `${prefix}rate-limit:caller:${caller.id}`
  t.equal(await redis.get(counter), '10', 'the counter never went past the budget')
  const left = await redis.pttl(counter)
  t.ok(left > 0 && left <= 60_000, `the counter expires with its window (${left} ms)`)
})

t.test('through Redis, parallel charges on both instances never spend more than the budget', { skip: skipWithoutRedis }, async (t) => {
  const { one, two, redis, prefix } = await twoInstances(t, 20)
  const viewer = await loginAs(one, 'viewer')
  const responses = await Promise.all(Array.from({ length: 12 }, (_, i) =>
    (i % 2 === 0 ? one : two).inject({ method: 'GET', url: '/weighted/3', headers: viewer })))
  t.same(responses.map((response) => response.statusCode).sort(), [...Array<number>(6).fill(200), ...Array<number>(6).fill(429)])
  t.same(responses.filter((response) => response.statusCode === 200).map((response) => response.headers['ratelimit-remaining']).sort(), ['11', '14', '17', '2', '5', '8'],
    'each charge saw the budget after every charge before it')
  const caller = await one.access.authenticate({ authorization: viewer.authorization })
  t.equal(await redis.get(`${prefix}rate-limit:caller:${caller.id}`), '18')
})

t.test('through Redis, a key and its account pay together or not at all, across instances', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, 20)
  const editor = await loginAs(one, 'editor')
  const key = { 'x-api-key': (await apiKeyOf(one, editor, { rateLimit: 6 }))['x-api-key'] }
  const charge = (app: typeof one, headers: Record<string, string>, units: number) => app.inject({ method: 'GET', url: `/weighted/${units}`, headers })
  t.equal(budgetOf(await charge(one, key, 4)), '200 6/2')
  t.equal(budgetOf(await charge(two, key, 3)), '429 6/2', 'the key cannot pay')
  t.equal(budgetOf(await charge(two, editor, 14)), '200 20/1', 'the account paid the four and the key\'s creation, not the refused three')
  const accountRefused = await charge(one, key, 2)
  t.equal(budgetOf(accountRefused), '429 20/1')
  t.match(accountRefused.json().message, /the account of this API key/)
  t.equal(budgetOf(await charge(two, key, 1)), '200 20/0', 'the key kept its two')
})

t.test('through Redis, the password checks of one username are counted across instances', { skip: skipWithoutRedis }, async (t) => {
  const { one, two } = await twoInstances(t, 1000)
  await one.access.useCases.createAccount(SETUP_ACTOR, { username: 'ada', password: PASSWORD, role: 'viewer' })
  const login = (app: typeof one) => app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'ada', password: PASSWORD } })
  // The default login limit: 10 failures, 5 × 10 = 50 checks per username.
  const statuses: number[] = []
  for (let i = 0; i < 25; i++) statuses.push((await login(one)).statusCode, (await login(two)).statusCode)
  t.same(statuses, Array<number>(50).fill(200))
  for (const app of [one, two]) {
    const refused = await login(app)
    t.equal(refused.statusCode, 429, 'either instance refuses the 51st')
    t.match(refused.json().message, /too many logins for this username/)
  }
})
