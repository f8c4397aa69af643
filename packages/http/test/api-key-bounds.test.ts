import t from 'tap'
import { createRepositories } from '@people-service/infra'
import { apiKeyOf, build, emptyPostgres, portsOver, sqliteDatabase } from './helper.js'

/*
 * What one account can make the service keep through its keys: a bounded
 * number of live keys, and usage counts stored whatever the number of keys
 * (in memory; suites under sqlite/ and postgres/ run it over each database).
 */

const TODAY = () => new Date().toISOString().slice(0, 10)

t.test('an account owns at most MAX_KEYS_PER_ACCOUNT live keys: one more is 409 TOO_MANY_KEYS, a revoked one frees a place', async (t) => {
  const { app, admin, as } = await build(t, { access: { maxKeysPerAccount: 3 } })
  const keys = []
  for (let i = 0; i < 3; i++) keys.push(await apiKeyOf(app, admin, { name: `key ${i}` }))
  const refused = await app.inject({ method: 'POST', url: '/api-keys', headers: admin, payload: { name: 'one more' } })
  t.equal(refused.statusCode, 409)
  t.match(refused.json(), { statusCode: 409, code: 'TOO_MANY_KEYS', message: /at most 3 live API keys/ })
  t.equal((await app.inject({ method: 'GET', url: '/api-keys', headers: admin })).json().length, 3, 'nothing was created')
  const viewer = await as('viewer')
  t.equal((await app.inject({ method: 'POST', url: '/api-keys', headers: viewer, payload: { name: 'theirs' } })).statusCode, 201, 'another account has its own allowance')
  await app.inject({ method: 'DELETE', url: `/api-keys/${keys[2]!.id}`, headers: admin })
  t.equal((await app.inject({ method: 'POST', url: '/api-keys', headers: admin, payload: { name: 'replacement' } })).statusCode, 201)
})

t.test('MAX_KEYS_PER_ACCOUNT is 100 unless set', async (t) => {
  const { app, as } = await build(t)
  const editor = await as('editor')
  for (let i = 0; i < 100; i++) {
    const response = await app.inject({ method: 'POST', url: '/api-keys', headers: editor, payload: { name: `key ${i}` } })
    if (response.statusCode !== 201) t.fail(`key ${i}: ${response.statusCode} ${response.body}`)
  }
  t.match((await app.inject({ method: 'POST', url: '/api-keys', headers: editor, payload: { name: 'the 101st' } })).json(), { statusCode: 409, code: 'TOO_MANY_KEYS' })
})

t.test('the usage of 50,000 keys is stored, in chunks, and so is a bystander key\'s', async (t) => {
  // A database's limits are the point: SQLite unless the suite names PostgreSQL.
  const database = process.env.PEOPLE_TEST_DATABASE === 'postgres' ? await emptyPostgres() : await sqliteDatabase(t)
  const { app, admin, ports } = await build(t, { ports: portsOver(createRepositories(database)) })
  const bystander = await apiKeyOf(app, admin)
  const { id: ownerId } = (await app.inject({ method: 'GET', url: '/users/me', headers: admin })).json<{ id: string }>()
  // The keys of many accounts, as many viewers' would be: written in bulk, the cap aside.
  const keys = Array.from({ length: 50_000 }, (_, i) => `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`)
  const now = new Date().toISOString()
  for (let start = 0; start < keys.length; start += 2_500) {
    await database.db.insertInto('api_key').values(keys.slice(start, start + 2_500).map((id) => ({
      id, owner_id: ownerId, name: 'many', scopes: 'people:read', rate_limit: null, lookup_id: id.slice(-11), secret_hash: 'x', created_at: now, revoked_at: null
    }))).execute()
  }
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': bystander['x-api-key'] } })).statusCode, 200)
  // One request through each key, as counted by the access hook.
  for (const id of keys) app.access.useCases.usageMeter.record(id)
  await t.resolves(app.access.useCases.usageMeter.flush(), 'the flush stores every count')
  t.same(await ports.apiKeyUsage.byDay(bystander.id), [{ day: TODAY(), requests: 3 }], 'the bystander\'s count is stored')
  for (const id of [keys[0]!, keys[24_999]!, keys[49_999]!]) t.same(await ports.apiKeyUsage.byDay(id), [{ day: TODAY(), requests: 1 }])
  t.same((await app.inject({ method: 'GET', url: `/api-keys/${keys[49_999]}/usage`, headers: admin })).json().byDay, [{ day: TODAY(), requests: 1 }], 'counted once: stored, nothing left pending')
  await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': bystander['x-api-key'] } })
  for (const id of keys.slice(0, 10)) app.access.useCases.usageMeter.record(id)
  await app.close()
  t.same(await ports.apiKeyUsage.byDay(bystander.id), [{ day: TODAY(), requests: 4 }], 'the shutdown flush stores what came after')
  t.same(await ports.apiKeyUsage.byDay(keys[9]!), [{ day: TODAY(), requests: 2 }])
})
