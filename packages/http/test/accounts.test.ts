import t from 'tap'
import { createRepositories } from '@people-service/infra'
import type { FastifyInstance } from 'fastify'
import { ADA, apiKeyOf, build, forgedCursor, getGraphQL, nextCursor, nextLink, PASSWORD, portsOver, realServer, sqliteDatabase, type Headers } from './helper.js'
import { ACCOUNT_DELETION_STEPS } from '@people-service/infra/testing'

const NEW_PASSWORD = 'a brand new passphrase'

/** Creates an account as an admin would and logs it in: its id and its token headers. */
const account = async (app: FastifyInstance, admin: Headers, username: string, role: string): Promise<{ id: string, headers: Headers }> => {
  const created = await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username, password: PASSWORD, role } })
  if (created.statusCode !== 201) throw new Error(`account creation failed: ${created.body}`)
  return { id: created.json<{ id: string }>().id, headers: await logIn(app, username) }
}

const logIn = async (app: FastifyInstance, username: string, password = PASSWORD): Promise<Headers> => {
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { username, password } })
  if (response.statusCode !== 200) throw new Error(`login failed (${response.statusCode}): ${response.body}`)
  return { authorization: `Bearer ${response.json<{ access_token: string }>().access_token}` }
}

/** Logs in over real HTTP: the token headers. */
const logInOver = async (url: string, username: string): Promise<Headers> => {
  const response = await fetch(`${url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password: PASSWORD }) })
  return { authorization: `Bearer ${((await response.json()) as { access_token: string }).access_token}` }
}

const status = async (app: FastifyInstance, headers: Headers, url = '/people'): Promise<number> =>
  (await app.inject({ method: 'GET', url, headers })).statusCode

const patch = (app: FastifyInstance, admin: Headers, id: string, payload: object) =>
  app.inject({ method: 'PATCH', url: `/users/${id}`, headers: admin, payload })

t.test('API keys never manage accounts, whatever their scopes: an admin key cannot mint accounts that outlive it', async (t) => {
  const { app, admin } = await build(t)
  const { id } = await account(app, admin, 'vera', 'viewer')
  const key = { 'x-api-key': (await apiKeyOf(app, admin))['x-api-key'] }
  const attempts = [
    { method: 'POST' as const, url: '/users', payload: { username: 'minted', password: PASSWORD, role: 'admin' } },
    { method: 'GET' as const, url: '/users' },
    { method: 'PATCH' as const, url: `/users/${id}`, payload: { role: 'admin' } },
    { method: 'DELETE' as const, url: `/users/${id}` },
    { method: 'POST' as const, url: '/auth/password', payload: { currentPassword: PASSWORD, newPassword: NEW_PASSWORD } }
  ]
  for (const attempt of attempts) {
    const response = await app.inject({ ...attempt, headers: key })
    t.equal(response.statusCode, 403, `${attempt.method} ${attempt.url}`)
    t.match(response.json(), { code: 'FORBIDDEN', message: /needs a logged-in account/ })
  }
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'minted', password: PASSWORD } })).statusCode, 401, 'no account was made')
  t.match((await app.inject({ method: 'GET', url: '/users?limit=1000', headers: admin })).json(), [{ username: /^admin-/ }, { username: 'vera', role: 'viewer' }], 'nothing changed')
})

t.test('accounts list by username, a page at a time, without password material', async (t) => {
  const { app, admin } = await build(t)
  for (const username of ['zoe', 'Bob', 'carol']) await account(app, admin, username, 'viewer')
  const first = await app.inject({ method: 'GET', url: '/users?limit=2', headers: admin })
  t.equal(first.statusCode, 200)
  const page = first.json<Array<Record<string, unknown>>>()
  t.same(page.map((a) => a.username), ['Bob', page[1]!.username])
  t.match(page[1]!.username, /^admin-/)
  t.same(Object.keys(page[0]!).sort(), ['createdAt', 'disabled', 'id', 'role', 'username'])
  t.match(page[0], { role: 'viewer', disabled: false })
  const next = nextLink(first.headers.link)
  t.match(next, /^\/users\?limit=2&cursor=/)
  const second = await app.inject({ method: 'GET', url: next!, headers: admin })
  t.same(second.json<Array<{ username: string }>>().map((a) => a.username), ['carol', 'zoe'])
  t.equal(second.headers.link, undefined, 'the last page has no next link')
  t.notMatch(first.body + second.body, /scrypt|password|hash|tokenVersion/i)
  // A cursor holds a username: anything else (U+0000 failed PostgreSQL, 500) was not issued here.
  const cursorOf = (value: string, list = 'accounts') => `/users?cursor=${forgedCursor([list, value])}`
  // A /people cursor holds an id, which is also a well-formed username: it had been read as one.
  for (const name of ['Ada', 'Bob']) await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name } })
  const peopleCursor = nextCursor((await app.inject({ method: 'GET', url: '/people?limit=1', headers: admin })).headers.link)
  t.match(peopleCursor, /^[\w-]+$/, 'a /people cursor')
  for (const url of ['/users?limit=0', '/users?limit=1001', '/users?cursor=nonsense', '/users?role=admin', cursorOf('a\u0000b'), cursorOf('a b'), cursorOf('x'.repeat(65)), cursorOf('Bob', 'people'), `/users?cursor=${peopleCursor}`]) {
    t.equal((await app.inject({ method: 'GET', url, headers: admin })).statusCode, 400, url)
  }
  const viewer = await logIn(app, 'zoe')
  t.equal(await status(app, viewer, '/users'), 403, 'admins only')
})

t.test('GET /users/me: the calling account, or the key\'s owner, and what this credential may do now', async (t) => {
  const { app, admin } = await build(t)
  const editor = await account(app, admin, 'eddie', 'editor')
  const me = await app.inject({ method: 'GET', url: '/users/me', headers: editor.headers })
  t.equal(me.statusCode, 200)
  t.same(Object.keys(me.json()).sort(), ['createdAt', 'disabled', 'id', 'role', 'scopes', 'username'])
  t.match(me.json(), { id: editor.id, username: 'eddie', role: 'editor', disabled: false, scopes: ['people:read', 'people:write', 'messages:send'] })
  const key = await apiKeyOf(app, editor.headers, { scopes: ['people:read', 'people:write'] })
  const viaKey = await app.inject({ method: 'GET', url: '/users/me', headers: { 'x-api-key': key['x-api-key'] } })
  t.match(viaKey.json(), { id: editor.id, username: 'eddie', role: 'editor', scopes: ['people:read', 'people:write'] })
  t.equal((await patch(app, admin, editor.id, { role: 'viewer' })).statusCode, 200)
  const demoted = await app.inject({ method: 'GET', url: '/users/me', headers: { 'x-api-key': key['x-api-key'] } })
  t.match(demoted.json(), { role: 'viewer', scopes: ['people:read'] }, 'the key now does only what a viewer may')
  t.equal((await app.inject({ method: 'GET', url: '/users/me' })).statusCode, 401)
})

t.test('a new role ends the account\'s earlier tokens at once, through REST and GraphQL, although tokens are checked from a cache', async (t) => {
  const { app, admin, ports } = await build(t, { access: { apiKeyCacheTtlMs: 3_600_000 } })
  const vera = await account(app, admin, 'vera', 'viewer')
  t.equal(await status(app, vera.headers), 200, 'the token works (and its account is now cached)')
  const before = await ports.revocations.version()
  const changed = await patch(app, admin, vera.id, { role: 'editor' })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { id: vera.id, username: 'vera', role: 'editor', disabled: false })
  t.not(await ports.revocations.version(), before, 'every instance (and open WebSocket) is told')
  const stale = await app.inject({ method: 'GET', url: '/people', headers: vera.headers })
  t.equal(stale.statusCode, 401)
  t.equal(stale.json().code, 'UNAUTHENTICATED')
  t.equal((await app.inject({ ...getGraphQL('{ people { id } }'), headers: vera.headers })).statusCode, 401, 'GraphQL too')
  await t.rejects(app.access.authenticate({ authorization: vera.headers.authorization }), { code: 'UNAUTHENTICATED' }, 'and the authenticator WebSockets use')
  const fresh = await logIn(app, 'vera')
  t.equal((await app.inject({ method: 'POST', url: '/person', headers: fresh, payload: ADA })).statusCode, 201, 'a new login acts as an editor')
  const same = await patch(app, admin, vera.id, { role: 'editor' })
  t.equal(same.statusCode, 200)
  t.equal(await status(app, fresh), 200, 'setting the role it already has changes nothing')
})

t.test('a new password ends earlier tokens; only the new password logs in', async (t) => {
  const { app, admin, ports } = await build(t)
  const vera = await account(app, admin, 'vera', 'viewer')
  const before = await ports.revocations.version()
  t.equal((await patch(app, admin, vera.id, { password: NEW_PASSWORD })).statusCode, 200)
  t.not(await ports.revocations.version(), before)
  t.equal(await status(app, vera.headers), 401)
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'vera', password: PASSWORD } })).statusCode, 401)
  t.equal(await status(app, await logIn(app, 'vera', NEW_PASSWORD)), 200)
  t.equal((await patch(app, admin, vera.id, { password: 'short' })).statusCode, 400)
  // Hashed, a lone surrogate becomes U+FFFD: every such password of one length would be one password.
  const lone = await patch(app, admin, vera.id, { password: '\ud800'.repeat(13) })
  t.same([lone.statusCode, lone.json().code], [400, 'VALIDATION_FAILED'], 'a password of lone surrogates')
  t.equal((await patch(app, admin, vera.id, { password: '\u{1F600}'.repeat(1000) })).statusCode, 200, 'characters are counted as the schema counts them: 1,000 emoji fit 1,024')
})

t.test('POST /auth/password: an account changes its own password, proving the current one; its tokens end', async (t) => {
  const { app, admin, ports } = await build(t)
  await account(app, admin, 'vera', 'viewer')
  const vera = await logIn(app, 'vera')
  const other = await logIn(app, 'vera')
  const change = (headers: Headers, payload: object) => app.inject({ method: 'POST', url: '/auth/password', headers, payload })
  const wrong = await change(vera, { currentPassword: 'not my password', newPassword: NEW_PASSWORD })
  t.equal(wrong.statusCode, 401)
  t.equal(wrong.json().code, 'INVALID_CREDENTIALS')
  t.equal(await status(app, vera), 200, 'a wrong current password changes nothing')
  t.equal((await change(vera, { currentPassword: PASSWORD, newPassword: 'short' })).statusCode, 400)
  t.equal((await change(vera, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, role: 'admin' })).statusCode, 400)
  const before = await ports.revocations.version()
  const changed = await change(vera, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD })
  t.equal(changed.statusCode, 200)
  t.same(changed.json(), { changed: true })
  t.not(await ports.revocations.version(), before)
  t.equal(await status(app, vera), 401, 'the token that asked')
  t.equal(await status(app, other), 401, 'and every other earlier one')
  t.equal(await status(app, await logIn(app, 'vera', NEW_PASSWORD)), 200)
})

t.test('disabling stops the account\'s tokens, keys and logins; enabling brings back its keys, not its old tokens', async (t) => {
  const { app, admin, ports } = await build(t)
  const eddie = await account(app, admin, 'eddie', 'editor')
  const key = { 'x-api-key': (await apiKeyOf(app, eddie.headers))['x-api-key'] }
  t.equal(await status(app, key), 200, 'the key works (and is now cached)')
  const before = await ports.revocations.version()
  const disabled = await patch(app, admin, eddie.id, { disabled: true })
  t.equal(disabled.statusCode, 200)
  t.match(disabled.json(), { disabled: true, role: 'editor' })
  t.not(await ports.revocations.version(), before)
  t.equal(await status(app, eddie.headers), 401, 'its token')
  t.equal(await status(app, key), 401, 'its key')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'eddie', password: PASSWORD } })).statusCode, 401, 'its login')
  t.equal((await patch(app, admin, eddie.id, { disabled: false })).statusCode, 200)
  t.equal(await status(app, key), 200, 'enabled again: its keys work')
  t.equal(await status(app, eddie.headers), 401, 'tokens from before it was disabled do not')
  t.equal(await status(app, await logIn(app, 'eddie')), 200)
})

t.test('a deleted account: its tokens and keys get 401 (never 500), its keys are gone, what it wrote stays', async (t) => {
  const { app, admin, ports } = await build(t)
  const eddie = await account(app, admin, 'eddie', 'editor')
  const key = await apiKeyOf(app, eddie.headers)
  const person = (await app.inject({ method: 'POST', url: '/person', headers: eddie.headers, payload: ADA })).json<{ id: string }>()
  const message = (await app.inject({ method: 'POST', url: '/message', headers: { 'x-api-key': key['x-api-key'] }, payload: { personId: person.id, text: 'hello' } })).json<{ id: string }>()
  const before = await ports.revocations.version()
  const deleted = await app.inject({ method: 'DELETE', url: `/users/${eddie.id}`, headers: admin })
  t.equal(deleted.statusCode, 200)
  t.same(deleted.json(), { id: eddie.id, deleted: true })
  t.not(await ports.revocations.version(), before)
  const minting = await app.inject({ method: 'POST', url: '/api-keys', headers: eddie.headers, payload: { name: 'after death' } })
  t.equal(minting.statusCode, 401, 'its token cannot mint keys')
  t.equal(minting.json().code, 'UNAUTHENTICATED')
  t.equal(await status(app, eddie.headers), 401)
  t.equal(await status(app, { 'x-api-key': key['x-api-key'] }), 401, 'its key')
  t.equal((await app.inject({ method: 'GET', url: `/api-keys/${key.id}/usage`, headers: admin })).statusCode, 404, 'its keys went with it')
  t.equal(await ports.apiKeys.findById(key.id), undefined)
  t.equal(await status(app, admin, `/person/${person.id}`), 200, 'the person it created stays')
  t.match((await app.inject({ method: 'GET', url: `/message/${message.id}`, headers: admin })).json(), { senderId: key.id }, 'its message stays, naming its sender')
  t.equal((await app.inject({ method: 'DELETE', url: `/users/${eddie.id}`, headers: admin })).statusCode, 404, 'gone')
  t.equal((await app.inject({ method: 'POST', url: '/auth/login', payload: { username: 'eddie', password: PASSWORD } })).statusCode, 401)
})

t.test('an account with more keys than a step is deleted whole over real HTTP: every key gone, revoked ones too, and it stops at once', async (t) => {
  // More keys than MAX_KEYS_PER_ACCOUNT's default: as a deployment that raised it holds.
  const { url, admin, database } = await realServer(t, { access: { maxKeysPerAccount: 1000 } })
  const post = (path: string, headers: Headers, body: object) =>
    fetch(`${url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  t.equal((await post('/users', admin, { username: 'hoarder', password: PASSWORD, role: 'editor' })).status, 201)
  const { id } = await (await fetch(`${url}/users/me`, { headers: await logInOver(url, 'hoarder') })).json() as { id: string }
  const hoarder = await logInOver(url, 'hoarder')
  // Three steps of keys and some: made as a caller makes them, one request each.
  const count = 3 * ACCOUNT_DELETION_STEPS.keyRows + 10
  const keys: Array<{ id: string, key: string }> = []
  for (let i = 0; i < count; i++) keys.push((await (await post('/api-keys', hoarder, { name: `key ${i}` })).json()) as { id: string, key: string })
  for (const { id: keyId } of keys.slice(0, 5)) t.equal((await fetch(`${url}/api-keys/${keyId}`, { method: 'DELETE', headers: hoarder })).status, 200)
  const used = keys.at(-1)!.key
  t.equal((await fetch(`${url}/people`, { headers: { 'x-api-key': used } })).status, 200, 'a key works before')

  // Meanwhile another admin keeps trying to enable it again: from its first step on, refused.
  const deletion = { done: false }
  const deleting = fetch(`${url}/users/${id}`, { method: 'DELETE', headers: admin }).finally(() => { deletion.done = true })
  const answers: Array<{ status: number, code?: string }> = []
  while (!deletion.done) {
    const response = await fetch(`${url}/users/${id}`, { method: 'PATCH', headers: { ...admin, 'content-type': 'application/json' }, body: '{"disabled":false}' })
    answers.push({ status: response.status, code: ((await response.json()) as { code?: string }).code })
  }
  const deleted = await deleting
  t.equal(deleted.status, 200)
  t.same(await deleted.json(), { id, deleted: true })
  const refused = answers.filter((a) => a.status === 409)
  t.ok(refused.length > 0, `enabling it during the deletion refused (${JSON.stringify(answers)})`)
  t.ok(refused.every((a) => a.code === 'ACCOUNT_BEING_DELETED'), 'as ACCOUNT_BEING_DELETED')
  t.same(answers.slice(answers.indexOf(refused[0]!)).filter((a) => a.status !== 409 && a.status !== 404), [], 'never enabled once the deletion began')
  t.equal((await fetch(`${url}/people`, { headers: { 'x-api-key': used } })).status, 401, 'its keys stop')
  t.equal((await fetch(`${url}/people`, { headers: hoarder })).status, 401, 'its token stops')
  t.equal((await fetch(`${url}/users/${id}`, { method: 'DELETE', headers: admin })).status, 404, 'gone')
  const { db } = database
  t.same(await db.selectFrom('api_key').select('id').where('owner_id', '=', id).execute(), [], 'no key of it is left')
  t.equal((await fetch(`${url}/people`, { headers: admin })).status, 200, 'everyone else goes on')
})

t.test('a key never acts with a scope its account no longer has', async (t) => {
  const { app, admin } = await build(t)
  const eddie = await account(app, admin, 'eddie', 'editor')
  const key = { 'x-api-key': (await apiKeyOf(app, eddie.headers, { scopes: ['people:read', 'people:write'] }))['x-api-key'] }
  const create = () => app.inject({ method: 'POST', url: '/person', headers: key, payload: ADA })
  t.equal((await create()).statusCode, 201)
  t.equal((await patch(app, admin, eddie.id, { role: 'viewer' })).statusCode, 200)
  const refused = await create()
  t.equal(refused.statusCode, 403, 'the account lost people:write, so the key did')
  t.equal(refused.json().code, 'FORBIDDEN')
  t.equal(await status(app, key), 200, 'what the account still may, the key still may')
  t.equal((await patch(app, admin, eddie.id, { role: 'admin' })).statusCode, 200)
  t.equal((await create()).statusCode, 201, 'promoted: the key has its own scopes back, and no more')
  t.equal(await status(app, key, '/users'), 403)
})

t.test('the last enabled admin cannot be deleted, disabled or given another role (409 LAST_ADMIN)', async (t) => {
  const { app, admin } = await build(t)
  const { id: first, username } = (await app.inject({ method: 'GET', url: '/users/me', headers: admin })).json<{ id: string, username: string }>()
  const refusals = [
    await patch(app, admin, first, { role: 'editor' }),
    await patch(app, admin, first, { disabled: true }),
    await app.inject({ method: 'DELETE', url: `/users/${first}`, headers: admin })
  ]
  for (const response of refusals) {
    t.equal(response.statusCode, 409)
    t.match(response.json(), { statusCode: 409, code: 'LAST_ADMIN', message: /last enabled admin/ })
  }
  t.equal(await status(app, admin), 200, 'nothing changed, not even the token')
  t.equal((await patch(app, admin, first, { password: NEW_PASSWORD })).statusCode, 200, 'a new password is no demotion')

  const second = await account(app, await logIn(app, username, NEW_PASSWORD), 'root2', 'admin')
  t.equal((await patch(app, second.headers, first, { disabled: true })).statusCode, 200, 'with two admins, one may go')
  t.equal((await patch(app, second.headers, second.id, { role: 'viewer' })).statusCode, 409, 'a disabled admin does not count')
  t.equal((await app.inject({ method: 'DELETE', url: `/users/${second.id}`, headers: second.headers })).statusCode, 409)
  t.equal((await patch(app, second.headers, first, { disabled: false })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/users/${second.id}`, headers: second.headers })).statusCode, 200, 'an admin may delete itself when another remains')
})

t.test('account changes: unknown ids are 404, bad bodies 400, an empty change 200', async (t) => {
  const { app, admin } = await build(t)
  const vera = await account(app, admin, 'vera', 'viewer')
  for (const url of ['/users/00000000-0000-7000-8000-000000000000', '/users/not-an-id']) {
    for (const method of ['PATCH', 'DELETE'] as const) {
      const response = await app.inject({ method, url, headers: admin, ...(method === 'PATCH' ? { payload: { role: 'editor' } } : {}) })
      t.equal(response.statusCode, 404, `${method} ${url}`)
      t.equal(response.json().code, 'ACCOUNT_NOT_FOUND')
    }
  }
  for (const [name, payload] of Object.entries({
    'an unknown role': { role: 'root' },
    'disabled not a boolean': { disabled: 'yes' },
    'a username': { username: 'renamed' },
    'a password hash': { passwordHash: 'x' },
    'not an object': [1]
  })) {
    t.equal((await patch(app, admin, vera.id, payload)).statusCode, 400, name)
  }
  const unchanged = await patch(app, admin, vera.id, {})
  t.equal(unchanged.statusCode, 200)
  t.match(unchanged.json(), { username: 'vera', role: 'viewer', disabled: false })
  t.equal(await status(app, vera.headers), 200, 'no change, no revocation')
  t.equal((await app.inject({ method: 'POST', url: '/users', headers: admin, payload: { username: 'vera', password: PASSWORD, role: 'viewer' } })).statusCode, 409, 'a taken username')
})

t.test('every response to an authenticated request carries Cache-Control: no-store', async (t) => {
  const { app, admin } = await build(t)
  const person = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: ADA })).json<{ id: string }>()
  const key = { 'x-api-key': (await apiKeyOf(app, admin))['x-api-key'] }
  const requests = {
    'a person by token': { url: `/person/${person.id}`, headers: admin },
    'a person by key': { url: `/person/${person.id}`, headers: key },
    'a list': { url: '/people', headers: admin },
    'a 404': { url: '/person/00000000-0000-7000-8000-000000000000', headers: admin },
    'a 400': { url: '/people?limit=0', headers: admin },
    'an account': { url: '/users/me', headers: admin },
    GraphQL: { ...getGraphQL(`{ person(id: "${person.id}") { name email } }`), headers: admin }
  }
  for (const [name, request] of Object.entries(requests)) {
    t.equal((await app.inject(request)).headers['cache-control'], 'no-store', name)
  }
})

t.test('GET and HEAD /metrics: admins, or the METRICS_TOKEN bearer; nobody else', async (t) => {
  const token = 'a-scraper-token-that-is-long-enough-to-use'
  const { app, admin, as } = await build(t, { access: { metricsToken: token } })
  const metrics = (headers: Headers) => app.inject({ method: 'GET', url: '/metrics', headers })
  t.equal((await metrics({})).statusCode, 401, 'anyone')
  t.equal((await metrics(await as('editor'))).statusCode, 403, 'an editor')
  t.equal((await metrics({ authorization: `Bearer ${token}x` })).statusCode, 401, 'a wrong token')
  t.equal((await metrics({ authorization: `Bearer ${token.slice(0, -1)}` })).statusCode, 401, 'a prefix of the token')
  const scraped = await metrics({ authorization: `Bearer ${token}` })
  t.equal(scraped.statusCode, 200, 'the scraper')
  t.match(scraped.body, /process_cpu_seconds_total/)
  t.equal((await metrics(admin)).statusCode, 200, 'an admin')
  t.equal((await metrics({ 'x-api-key': (await apiKeyOf(app, admin, { scopes: ['admin'] }))['x-api-key'] })).statusCode, 200, 'a key with the admin scope')
  // HEAD as for every GET: the same doors, no body.
  const head = (headers: Headers) => app.inject({ method: 'HEAD', url: '/metrics', headers })
  t.same([(await head({})).statusCode, (await head(await as('editor'))).statusCode], [401, 403])
  const headed = await head({ authorization: `Bearer ${token}` })
  t.same([headed.statusCode, headed.body, headed.headers['content-type']], [200, '', scraped.headers['content-type']])
  t.equal((await app.inject({ method: 'POST', url: '/metrics', headers: admin })).headers.allow, 'GET, HEAD')

  const { app: unset } = await build(t)
  t.equal((await unset.inject({ method: 'GET', url: '/metrics', headers: { authorization: 'Bearer ' } })).statusCode, 401, 'no token configured: no token opens it')
})

t.test('in steady state a credential costs no database statement: GET /person/<id> reads only the person', async (t) => {
  const database = await sqliteDatabase(t)
  const { app, admin } = await build(t, { ports: portsOver(createRepositories(database)) })
  const person = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: ADA })).json<{ id: string }>()
  const key = { 'x-api-key': (await apiKeyOf(app, admin))['x-api-key'] }
  for (const headers of [admin, key]) t.equal(await status(app, headers, `/person/${person.id}`), 200, 'warm')
  database.statements.length = 0
  for (let i = 0; i < 10; i++) {
    for (const headers of [admin, key]) t.equal(await status(app, headers, `/person/${person.id}`), 200)
  }
  t.equal(database.statements.length, 20, 'one statement per request')
  t.ok(database.statements.every((statement) => statement.includes('"person"')), 'the person\'s, never an account\'s or a key\'s')
})
