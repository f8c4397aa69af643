import t from 'tap'
import { accountCaller, ROLES, SCOPES_OF_ROLE, type Ports, type Role, type Scope } from '@people-service/domain'
import { SETUP_ACTOR, type inMemoryWebhookRepository } from '@people-service/domain/testing'
import { authorize, GRAPHQL_FIELD_OPERATIONS, POLICY, type Operation } from '@people-service/http'
import type { FastifyInstance } from 'fastify'
import { ADA, apiKeyOf, build, clientOf, getGraphQL, graphql, loginAs, PASSWORD, postGraphQL, type Headers } from './helper.js'

interface Fixture { person: string, friend: string, message: string, key: string, account: string, webhook: string, delivery: string }

interface RouteCase {
  operation: Operation
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: (f: Fixture) => string
  body?: (f: Fixture) => Record<string, unknown>
  status: number
}

let users = 0
/** Every REST route, with a request that succeeds when the caller is allowed. */
const ROUTES: RouteCase[] = [
  { operation: 'people.list', method: 'GET', url: () => '/people', status: 200 },
  { operation: 'person.get', method: 'GET', url: (f) => `/person/${f.person}`, status: 200 },
  { operation: 'person.create', method: 'POST', url: () => '/person', body: () => ADA, status: 201 },
  { operation: 'person.create', method: 'POST', url: () => '/person', body: (f) => ({ id: f.person, age: 37 }), status: 200 },
  { operation: 'person.update', method: 'PUT', url: (f) => `/person/${f.person}`, body: () => ({ age: 37 }), status: 200 },
  { operation: 'person.update', method: 'PATCH', url: (f) => `/person/${f.person}`, body: () => ({ age: 37 }), status: 200 },
  { operation: 'person.update', method: 'POST', url: (f) => `/person/${f.person}`, body: () => ({ age: 37 }), status: 200 },
  { operation: 'person.delete', method: 'DELETE', url: (f) => `/person/${f.person}`, status: 200 },
  { operation: 'friends.list', method: 'GET', url: (f) => `/person/${f.person}/friends`, status: 200 },
  { operation: 'friends.add', method: 'PUT', url: (f) => `/person/${f.person}/friends/${f.friend}`, status: 200 },
  { operation: 'friends.remove', method: 'DELETE', url: (f) => `/person/${f.person}/friends/${f.friend}`, status: 200 },
  { operation: 'messages.list', method: 'GET', url: (f) => `/person/${f.person}/messages`, status: 200 },
  { operation: 'message.get', method: 'GET', url: (f) => `/message/${f.message}`, status: 200 },
  { operation: 'message.send', method: 'POST', url: () => '/message', body: (f) => ({ personId: f.person, text: 'hello' }), status: 201 },
  { operation: 'users.create', method: 'POST', url: () => '/users', body: () => ({ username: `made-${++users}`, password: 'a long enough password', role: 'viewer' }), status: 201 },
  { operation: 'users.list', method: 'GET', url: () => '/users', status: 200 },
  { operation: 'users.me', method: 'GET', url: () => '/users/me', status: 200 },
  { operation: 'users.update', method: 'PATCH', url: (f) => `/users/${f.account}`, body: () => ({ role: 'editor' }), status: 200 },
  { operation: 'users.delete', method: 'DELETE', url: (f) => `/users/${f.account}`, status: 200 },
  { operation: 'apiKeys.create', method: 'POST', url: () => '/api-keys', body: () => ({ name: 'k', scopes: ['people:read'] }), status: 201 },
  { operation: 'apiKeys.list', method: 'GET', url: () => '/api-keys', status: 200 },
  { operation: 'apiKeys.revoke', method: 'DELETE', url: (f) => `/api-keys/${f.key}`, status: 200 },
  { operation: 'apiKeys.usage', method: 'GET', url: (f) => `/api-keys/${f.key}/usage`, status: 200 },
  { operation: 'events.list', method: 'GET', url: () => '/events', status: 200 },
  { operation: 'webhooks.create', method: 'POST', url: () => '/webhooks', body: () => ({ url: 'https://hooks.example.org/in', types: ['person.created'] }), status: 201 },
  { operation: 'webhooks.list', method: 'GET', url: () => '/webhooks', status: 200 },
  { operation: 'webhooks.get', method: 'GET', url: (f) => `/webhooks/${f.webhook}`, status: 200 },
  { operation: 'webhooks.update', method: 'PATCH', url: (f) => `/webhooks/${f.webhook}`, body: () => ({ disabled: true }), status: 200 },
  { operation: 'webhooks.deliveries', method: 'GET', url: (f) => `/webhooks/${f.webhook}/deliveries`, status: 200 },
  { operation: 'webhooks.retry', method: 'POST', url: (f) => `/webhooks/${f.webhook}/deliveries/${f.delivery}/retry`, status: 202 },
  { operation: 'webhooks.delete', method: 'DELETE', url: (f) => `/webhooks/${f.webhook}`, status: 200 },
  { operation: 'auth.login', method: 'POST', url: () => '/auth/login', body: () => ({ username: 'nobody', password: 'wrong' }), status: 401 },
  { operation: 'health.live', method: 'GET', url: () => '/health/live', status: 200 },
  { operation: 'root', method: 'GET', url: () => '/', status: 200 },
  { operation: 'favicon', method: 'GET', url: () => '/favicon.ico', status: 200 },
  { operation: 'health.ready', method: 'GET', url: () => '/health/ready', status: 200 },
  // Last: it ends the caller's token, so no route may come after it.
  { operation: 'auth.password', method: 'POST', url: () => '/auth/password', body: () => ({ currentPassword: PASSWORD, newPassword: PASSWORD }), status: 200 }
]

// Served by adapters that are not REST routes of this package.
const NOT_REST: Operation[] = ['graphql', 'graphiql', 'docs', 'openapi', 'metrics']

/** What the contract's role table says a caller with these scopes may do. */
const allowed = (operation: Operation, scopes: readonly Scope[] | undefined, kind: 'account' | 'apiKey'): boolean => {
  const rule = POLICY[operation]
  if (rule.access === 'public') return true
  if (scopes === undefined) return false
  if ('accounts' in rule && kind !== 'account') return false
  const scope: Scope | undefined = 'scope' in rule ? rule.scope : undefined
  return scope === undefined || scopes.includes(scope)
}

/**
 * A webhook with one failed delivery, stored directly: the fixtures of every
 * case would pass the cap on webhooks if each were registered through the API.
 */
let lastWebhook: string | undefined
const webhookFixture = async (ports: Ports): Promise<{ webhook: string, delivery: string }> => {
  const webhooks = ports.webhooks as ReturnType<typeof inMemoryWebhookRepository>
  // One at a time, so the fixtures never reach the cap the creations are checked against.
  if (lastWebhook !== undefined) await webhooks.remove(lastWebhook)
  const webhook = lastWebhook = ports.ids.next()
  await webhooks.insert({ id: webhook, url: 'https://hooks.example.org/in', types: [], description: null, disabled: false, createdAt: new Date(), sealedSecret: 'v1.sealed' })
  const delivery = ports.ids.next()
  webhooks.record({ id: delivery, webhookId: webhook, eventId: ports.ids.next(), status: 'failed', attempts: 3, lastStatusCode: 500, nextAttemptAt: null })
  return { webhook, delivery }
}

const fixture = async (app: FastifyInstance, ports: Ports, admin: Headers, keyOwner: Headers): Promise<Fixture> => {
  const post = async (url: string, payload: object) => (await app.inject({ method: 'POST', url, headers: admin, payload })).json<{ id: string }>()
  const person = await post('/person', ADA)
  const friend = await post('/person', { name: 'Bob' })
  await app.inject({ method: 'PUT', url: `/person/${person.id}/friends/${friend.id}`, headers: admin })
  const message = await post('/message', { personId: person.id, text: 'hi' })
  const key = await apiKeyOf(app, keyOwner, { scopes: ['people:read'] })
  const account = await app.access.useCases.createAccount(SETUP_ACTOR, { username: `target-${++users}`, password: PASSWORD, role: 'viewer' })
  return { person: person.id, friend: friend.id, message: message.id, key: key.id, account: account.id, ...await webhookFixture(ports) }
}

t.test('every REST operation of the policy table is exercised here', async (t) => {
  const covered = new Set(ROUTES.map((r) => r.operation))
  const rest = (Object.keys(POLICY) as Operation[]).filter((op) => !NOT_REST.includes(op))
  t.same([...covered].sort(), rest.sort())
})

t.test('the role table through REST: every route × every role, key scope and no credentials', async (t) => {
  // A key per route and caller: the cap on keys raised past them.
  const { app, admin, ports } = await build(t, { access: { limits: { max: 0 }, maxKeysPerAccount: 100_000 } })
  const accounts = Object.fromEntries(await Promise.all(ROLES.map(async (role) => [role, await loginAs(app, role)]))) as Record<Role, Headers>
  const keyScopes: Scope[][] = [['people:read'], ['people:write'], ['messages:send'], ['people:read', 'people:write', 'messages:send', 'admin']]
  const keys = await Promise.all(keyScopes.map(async (scopes) => ({ scopes, headers: await apiKeyOf(app, admin, { scopes }) })))

  const callers: Array<{ name: string, headers: Headers, scopes: readonly Scope[] | undefined, kind: 'account' | 'apiKey', role?: Role }> = [
    { name: 'no credentials', headers: {}, scopes: undefined, kind: 'account' },
    ...ROLES.map((role) => ({ name: `${role} account`, headers: accounts[role], scopes: SCOPES_OF_ROLE[role], kind: 'account' as const, role })),
    ...keys.map(({ scopes, headers }) => ({ name: `key [${scopes.join(' ')}]`, headers: { 'x-api-key': headers['x-api-key'] }, scopes, kind: 'apiKey' as const }))
  ]

  for (const route of ROUTES) {
    for (const caller of callers) {
      // Keys to revoke or inspect belong to the caller's account (or admin's when it is a key), so ownership never decides.
      const f = await fixture(app, ports, admin, caller.kind === 'account' && caller.role ? caller.headers : admin)
      const response = await app.inject({ method: route.method, url: route.url(f), headers: caller.headers, ...(route.body ? { payload: route.body(f) } : {}) })
      const label = `${route.method} ${route.url(f).replace(/[0-9a-f-]{36}/g, ':id')} as ${caller.name}`
      const isPublic = POLICY[route.operation].access === 'public'
      if (!isPublic && caller.scopes === undefined) {
        t.equal(response.statusCode, 401, label)
        t.equal(response.json().code, 'UNAUTHENTICATED', label)
      } else if (allowed(route.operation, caller.scopes, caller.kind)) {
        t.equal(response.statusCode, route.status, `${label}: ${response.body.slice(0, 120)}`)
      } else {
        t.equal(response.statusCode, 403, label)
        t.equal(response.json().code, 'FORBIDDEN', label)
      }
    }
  }
})

t.test('unknown paths and 405s need credentials unless the path is public', async (t) => {
  const { app, admin } = await build(t)
  t.equal((await app.inject({ method: 'GET', url: '/nowhere' })).statusCode, 401)
  t.equal((await app.inject({ method: 'GET', url: '/nowhere', headers: admin })).statusCode, 404)
  t.equal((await app.inject({ method: 'DELETE', url: '/people' })).statusCode, 401)
  const notAllowed = await app.inject({ method: 'DELETE', url: '/people', headers: admin })
  t.equal(notAllowed.statusCode, 405)
  t.equal(notAllowed.headers.allow, 'GET, HEAD')
  t.equal((await app.inject({ method: 'DELETE', url: '/health/live' })).statusCode, 405, 'a public path answers 405 to anyone')
  t.equal((await app.inject({ method: 'HEAD', url: '/people', headers: admin })).statusCode, 200)
  t.equal((await app.inject({ method: 'HEAD', url: '/people' })).statusCode, 401)
})

t.test('with CORS on, its catch-all OPTIONS route needs credentials too; preflights still pass', async (t) => {
  const origin = 'https://app.example.org'
  const { app, admin } = await build(t, { corsOrigins: [origin] })
  for (const url of ['/nowhere', '/people']) {
    const anonymous = await app.inject({ method: 'OPTIONS', url })
    t.equal(anonymous.statusCode, 401, `OPTIONS ${url} without credentials`)
    t.equal(anonymous.json().code, 'UNAUTHENTICATED')
  }
  t.equal((await app.inject({ method: 'OPTIONS', url: '/nowhere', headers: admin })).statusCode, 404, 'with credentials: the path is unknown')
  const preflight = await app.inject({ method: 'OPTIONS', url: '/people', headers: { origin, 'access-control-request-method': 'GET' } })
  t.equal(preflight.statusCode, 204, 'a preflight carries no credentials and needs none')
  t.equal(preflight.headers['access-control-allow-origin'], origin)
})

t.test('a route without a row in the policy table cannot be registered', async (t) => {
  await build(t, {
    extend: (app) => { t.throws(() => app.get('/forgotten', async () => ({})), /no row in the policy table/) }
  })
})

t.test('GraphQL: every field of the contract\'s schema is governed by the same rows', async (t) => {
  const contractFields = [
    'Query.person', 'Query.people', 'Query.peopleConnection', 'Query.message', 'Person.friends', 'Person.friendsConnection', 'Person.messages',
    'Person.messagesConnection', 'Message.person', 'Mutation.createPerson', 'Mutation.updatePerson', 'Mutation.deletePerson', 'Mutation.addFriend',
    'Mutation.removeFriend', 'Mutation.sendMessage', 'Subscription.messageSent'
  ]
  t.same(Object.keys(GRAPHQL_FIELD_OPERATIONS).sort(), contractFields.sort())
  const expectedScope: Record<string, Scope> = {
    Query: 'people:read', Person: 'people:read', Message: 'people:read', Subscription: 'people:read', Mutation: 'people:write'
  }
  for (const [field, operation] of Object.entries(GRAPHQL_FIELD_OPERATIONS)) {
    const scope: Scope = field === 'Mutation.sendMessage' ? 'messages:send' : expectedScope[field.split('.')[0]!]!
    t.throws(() => authorize(undefined, operation), { code: 'UNAUTHENTICATED' }, `${field} without a caller`)
    for (const role of ROLES) {
      const caller = accountCaller({ id: 'a', role })
      if (SCOPES_OF_ROLE[role].includes(scope)) t.equal(authorize(caller, operation), caller, `${field} as ${role}`)
      else t.throws(() => authorize(caller, operation), { code: 'FORBIDDEN' }, `${field} as ${role}`)
    }
  }
})

t.test('GraphQL: the hook authenticates /graphql and counts it; the adapter authorizes each field with the table', async (t) => {
  const { app, api } = await build(t)
  const viewer = clientOf(app, await loginAs(app, 'viewer'))
  const editor = clientOf(app, await loginAs(app, 'editor'))
  const create = postGraphQL('mutation { createPerson(input: { name: "Ada" }) { id } }')
  for (const request of [getGraphQL('{ people { id } }'), create]) {
    const anonymous = await graphql(app, request)
    t.equal(anonymous.status, 401, `${String(request.method)} without credentials: 401`)
    t.match(anonymous.body, { errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] })
  }
  const denied = await graphql(viewer, create)
  t.equal(denied.status, 403)
  t.same(denied.body, { errors: [{ message: 'Mutation.createPerson needs the people:write scope', locations: [{ line: 1, column: 12 }], extensions: { code: 'FORBIDDEN' } }] })
  t.ok(denied.response.headers['ratelimit-remaining'] !== undefined, 'the request counted against the budget')
  t.same((await api.inject({ method: 'GET', url: '/people' })).json(), [], 'the mutation did not run')
  const allowed = await graphql(editor, create)
  t.equal(allowed.status, 200)
  t.match(allowed.body, { data: { createPerson: { id: String } } })
  const upgrade = await graphql(app, { ...getGraphQL('{ people { id } }'), headers: { upgrade: 'websocket', connection: 'upgrade' } })
  t.equal(upgrade.status, 401, 'only a real WebSocket upgrade is left to the connection-init payload')
})

t.test('GraphQL: connection-init credentials verify through the same authenticator', async (t) => {
  const { app } = await build(t)
  const editor = await loginAs(app, 'editor')
  const viaPayload = await app.access.authenticate({ authorization: editor.authorization })
  t.equal(viaPayload.kind, 'account')
  await t.rejects(app.access.authenticate({ apiKey: 'ps_nope' }), { code: 'UNAUTHENTICATED' })
  await t.rejects(app.access.authenticate({}), { code: 'UNAUTHENTICATED' })
})

// Access is a hook each route gets as it is registered: a route registered
// before it would be open. Every operation the OpenAPI document names with
// a security requirement must refuse a request without credentials.
t.test('every documented operation that needs credentials refuses a request without them', async (t) => {
  const { app } = await build(t)
  const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json<{
    paths: Record<string, Record<string, { security?: unknown[] }>>
  }>()
  let checked = 0
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      if (operation.security !== undefined && operation.security.length === 0) continue
      const url = path.replace(/\{[^}]+\}/g, '01890a5d-ac96-774b-bcce-b302099a8057')
      const response = await app.inject({ method: method.toUpperCase() as RouteCase['method'], url })
      t.equal(response.statusCode, 401, `${method.toUpperCase()} ${path} without credentials`)
      checked++
    }
  }
  t.ok(checked >= 20, `${checked} operations checked`)
})
