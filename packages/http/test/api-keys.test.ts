import { SETUP_ACTOR } from '@people-service/domain/testing'
import t from 'tap'
import { ADA, apiKeyOf, build, forgedCursor, loginAs, nextLink, PASSWORD } from './helper.js'

const TODAY = () => new Date().toISOString().slice(0, 10)

t.test('a key is shown once, at creation, and then authenticates requests', async (t) => {
  const { app, admin } = await build(t)
  const response = await app.inject({ method: 'POST', url: '/api-keys', headers: admin, payload: { name: 'reports', scopes: ['people:read'], rateLimit: 500 } })
  t.equal(response.statusCode, 201)
  t.equal(response.headers['cache-control'], 'no-store')
  const created = response.json()
  t.same(Object.keys(created).sort(), ['createdAt', 'id', 'key', 'name', 'rateLimit', 'scopes'])
  t.match(created, { name: 'reports', scopes: ['people:read'], rateLimit: 500 })
  t.match(created.key, /^ps_[A-Za-z0-9_-]{54}$/, 'prefix, then 8 + 32 random bytes')
  const people = await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': created.key } })
  t.equal(people.statusCode, 200)
  t.equal(people.headers['ratelimit-limit'], '500', 'the key\'s own budget')

  const listed = await app.inject({ method: 'GET', url: '/api-keys', headers: admin })
  t.same(listed.json(), [{ id: created.id, name: 'reports', scopes: ['people:read'], rateLimit: 500, createdAt: created.createdAt }])
  t.notOk(listed.body.includes(created.key.slice(3)), 'never shown again')
  const defaults = await apiKeyOf(app, admin)
  const listedAgain = await app.inject({ method: 'GET', url: '/api-keys', headers: admin })
  t.same(listedAgain.json()[1].scopes, ['people:read', 'people:write', 'messages:send', 'admin'], 'scopes default to the creator\'s')
  t.equal(listedAgain.json()[1].rateLimit, null)
  t.equal(listedAgain.json()[1].id, defaults.id)
})

t.test('a message sent with a key or a token records that key or account as its sender', async (t) => {
  const { app, admin } = await build(t)
  const person = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: ADA })).json()
  const key = await apiKeyOf(app, admin, { scopes: ['messages:send'] })
  const byKey = await app.inject({ method: 'POST', url: '/message', headers: { 'x-api-key': key['x-api-key'] }, payload: { personId: person.id, text: 'from a key' } })
  t.equal(byKey.json().senderId, key.id)
  const account = await app.access.useCases.createAccount(SETUP_ACTOR, { username: 'sender', password: PASSWORD, role: 'editor' })
  const token = (await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'sender', password: PASSWORD } })).json().access_token
  const byAccount = await app.inject({ method: 'POST', url: '/message', headers: { authorization: `Bearer ${token}` }, payload: { personId: person.id, text: 'from an account' } })
  t.equal(byAccount.json().senderId, account.id)
  const forged = await app.inject({ method: 'POST', url: '/message', headers: admin, payload: { personId: person.id, text: 'x', senderId: 'someone-else' } })
  t.equal(forged.statusCode, 400, 'a body cannot choose its sender')
})

t.test('scope escalation: a key never gets more than its creator has', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 100 } } })
  const viewer = await loginAs(app, 'viewer')
  const editor = await loginAs(app, 'editor')
  const attempts: Array<[string, Record<string, string>, Record<string, unknown>, number]> = [
    ['viewer asks for people:write', viewer, { name: 'k', scopes: ['people:write'] }, 403],
    ['viewer asks for messages:send beside people:read', viewer, { name: 'k', scopes: ['people:read', 'messages:send'] }, 403],
    ['viewer asks for admin', viewer, { name: 'k', scopes: ['admin'] }, 403],
    ['editor asks for admin', editor, { name: 'k', scopes: ['people:read', 'admin'] }, 403],
    ['editor asks for a budget above the default', editor, { name: 'k', rateLimit: 101 }, 403],
    ['an unknown scope', editor, { name: 'k', scopes: ['people:delete'] }, 400],
    ['a budget of 0', editor, { name: 'k', rateLimit: 0 }, 400],
    ['no name', editor, { scopes: ['people:read'] }, 400],
    ['an extra field', editor, { name: 'k', ownerId: 'someone' }, 400],
    ['editor within their scopes', editor, { name: 'k', scopes: ['people:read', 'messages:send'], rateLimit: 100 }, 201],
    ['admin above the default budget', admin, { name: 'k', rateLimit: 10_000 }, 201]
  ]
  for (const [name, headers, payload, status] of attempts) {
    const response = await app.inject({ method: 'POST', url: '/api-keys', headers, payload })
    t.equal(response.statusCode, status, `${name}: ${response.body.slice(0, 100)}`)
  }
  const adminKey = await apiKeyOf(app, admin)
  for (const [method, url] of [['POST', '/api-keys'], ['GET', '/api-keys'], ['DELETE', `/api-keys/${adminKey.id}`], ['GET', `/api-keys/${adminKey.id}/usage`]] as const) {
    const response = await app.inject({ method, url, headers: { 'x-api-key': adminKey['x-api-key'] }, ...(method === 'POST' ? { payload: { name: 'child' } } : {}) })
    t.equal(response.statusCode, 403, `an API key (even an admin's) cannot ${method} ${url.replace(adminKey.id, ':id')}`)
  }
  const readOnly = await apiKeyOf(app, editor, { scopes: ['people:read'] })
  const write = await app.inject({ method: 'POST', url: '/person', headers: { 'x-api-key': readOnly['x-api-key'] }, payload: ADA })
  t.equal(write.statusCode, 403, 'a key is limited to its own scopes, not its owner\'s')
})

t.test('owners see and revoke their own keys; admins everyone\'s; others get 403', async (t) => {
  const { app, admin } = await build(t)
  const viewer = await loginAs(app, 'viewer')
  const other = await loginAs(app, 'viewer')
  const mine = await apiKeyOf(app, viewer)
  const theirs = await apiKeyOf(app, other)
  t.same((await app.inject({ method: 'GET', url: '/api-keys', headers: viewer })).json().map((k: { id: string }) => k.id), [mine.id])
  t.same((await app.inject({ method: 'GET', url: '/api-keys', headers: admin })).json().map((k: { id: string }) => k.id), [mine.id, theirs.id])
  for (const url of [`/api-keys/${theirs.id}`, `/api-keys/${theirs.id}/usage`]) {
    const response = await app.inject({ method: url.endsWith('usage') ? 'GET' : 'DELETE', url, headers: viewer })
    t.equal(response.statusCode, 403, url)
  }
  t.equal((await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': theirs['x-api-key'] } })).statusCode, 200, 'their key still works')
  const adminRevokes = await app.inject({ method: 'DELETE', url: `/api-keys/${theirs.id}`, headers: admin })
  t.same(adminRevokes.json(), { id: theirs.id, deleted: true })
  for (const id of ['01a1fe85-9381-7000-965a-5b209093afdb', 'not-an-id']) {
    const response = await app.inject({ method: 'DELETE', url: `/api-keys/${id}`, headers: admin })
    t.equal(response.statusCode, 404, id)
    t.equal(response.json().code, 'API_KEY_NOT_FOUND')
  }
})

t.test('keys are listed up to 1,000 a page, oldest first; the Link header leads through the rest', async (t) => {
  // Over a page of one account's keys: the cap raised past it.
  const { app, admin } = await build(t, { access: { limits: { max: 0 }, maxKeysPerAccount: 2000 } })
  const viewer = await loginAs(app, 'viewer')
  const created: string[] = []
  for (let i = 0; i < 1001; i++) created.push((await apiKeyOf(app, viewer, { name: `k${i}` })).id)
  const own = await app.inject({ method: 'GET', url: '/api-keys', headers: viewer })
  t.equal(own.statusCode, 200)
  t.same(own.json<Array<{ id: string }>>().map((k) => k.id), created.slice(0, 1000), 'the first thousand, by default')
  const next = nextLink(own.headers.link)
  t.match(next, /^\/api-keys\?cursor=/)
  const rest = await app.inject({ method: 'GET', url: next!, headers: viewer })
  t.same(rest.json<Array<{ id: string }>>().map((k) => k.id), [created[1000]], 'and the one after them')
  t.equal(rest.headers.link, undefined, 'the last page has no next link')

  // Pages of two; the key a cursor names revoked in between: each key still comes once.
  const adminKey = (await apiKeyOf(app, admin)).id
  const seen: string[] = []
  let url: string | undefined = '/api-keys?limit=2'
  while (url !== undefined) {
    const page = await app.inject({ method: 'GET', url, headers: admin })
    t.equal(page.statusCode, 200, url)
    const ids = page.json<Array<{ id: string }>>().map((k) => k.id)
    seen.push(...ids)
    url = nextLink(page.headers.link)
    if (seen.length === 2) {
      t.match(url, /^\/api-keys\?limit=2&cursor=/, 'the limit is kept')
      t.equal((await app.inject({ method: 'DELETE', url: `/api-keys/${ids[1]}`, headers: admin })).statusCode, 200)
    }
  }
  t.same(seen, [...created, adminKey], 'an admin walks everyone\'s keys, each once')

  const cursorOf = (key: unknown) => `/api-keys?cursor=${forgedCursor(key)}`
  for (const bad of ['/api-keys?limit=0', '/api-keys?limit=1001', '/api-keys?cursor=nonsense', '/api-keys?owner=me', cursorOf(['api-keys', 'k1']), cursorOf(['api-keys', '2026-11-21T10:00:00Z', adminKey]), cursorOf(['api-keys', '2026-11-21T10:00:00.000Z', 'not-an-id']), cursorOf(['2026-11-21T10:00:00.000Z', adminKey])]) {
    const response = await app.inject({ method: 'GET', url: bad, headers: viewer })
    t.equal(response.statusCode, 400, bad)
    t.match(response.json(), { statusCode: 400, error: 'Bad Request' })
  }
  t.equal((await app.inject({ method: 'GET', url: cursorOf(['api-keys', '2026-11-21T10:00:00.000Z', 'nonsense']), headers: viewer })).json().code, 'INVALID_CURSOR')
})

t.test('revocation takes effect on the very next request, although keys are cached', async (t) => {
  const { app, admin } = await build(t)
  const key = await apiKeyOf(app, admin)
  const headers = { 'x-api-key': key['x-api-key'] }
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ method: 'GET', url: '/people', headers })).statusCode, 200)
  const revoked = await app.inject({ method: 'DELETE', url: `/api-keys/${key.id}`, headers: admin })
  t.same(revoked.json(), { id: key.id, deleted: true })
  const after = await app.inject({ method: 'GET', url: '/people', headers })
  t.equal(after.statusCode, 401)
  t.equal(after.json().message, 'the API key is unknown or revoked')
  t.equal((await app.inject({ method: 'DELETE', url: `/api-keys/${key.id}`, headers: admin })).statusCode, 404, 'revoking twice')
  t.same((await app.inject({ method: 'GET', url: '/api-keys', headers: admin })).json(), [], 'revoked keys are not listed')
  t.equal((await app.inject({ method: 'GET', url: `/api-keys/${key.id}/usage`, headers: admin })).json().total, 3, 'the usage of a revoked key stays readable')
})

t.test('usage counts every request made with a key, stored or not yet stored', async (t) => {
  const { app, admin, ports } = await build(t)
  const key = await apiKeyOf(app, admin, { scopes: ['people:read'] })
  const other = await apiKeyOf(app, admin)
  const headers = { 'x-api-key': key['x-api-key'] }
  for (let i = 0; i < 4; i++) await app.inject({ method: 'GET', url: '/people', headers })
  await app.inject({ method: 'POST', url: '/person', headers, payload: ADA })
  await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': other['x-api-key'] } })
  await app.inject({ method: 'GET', url: '/people', headers: admin })
  const usage = await app.inject({ method: 'GET', url: `/api-keys/${key.id}/usage`, headers: admin })
  t.equal(usage.statusCode, 200)
  t.same(usage.json(), { id: key.id, total: 5, byDay: [{ day: TODAY(), requests: 5 }] }, 'refused requests count too')
  t.same(await ports.apiKeyUsage.byDay(key.id), [], 'nothing written per request')
  await app.access.useCases.usageMeter.flush()
  t.same(await ports.apiKeyUsage.byDay(key.id), [{ day: TODAY(), requests: 5 }], 'written in one batch')
  await app.inject({ method: 'GET', url: '/people', headers })
  t.same((await app.inject({ method: 'GET', url: `/api-keys/${key.id}/usage`, headers: admin })).json().byDay, [{ day: TODAY(), requests: 6 }], 'stored and pending add up, once')
  t.equal((await app.inject({ method: 'GET', url: `/api-keys/${other.id}/usage`, headers: admin })).json().total, 1)
})

t.test('usage is stored when the app closes', async (t) => {
  const { app, admin, ports } = await build(t)
  const key = await apiKeyOf(app, admin)
  await app.inject({ method: 'GET', url: '/people', headers: { 'x-api-key': key['x-api-key'] } })
  await app.close()
  t.same(await ports.apiKeyUsage.byDay(key.id), [{ day: TODAY(), requests: 1 }])
})
