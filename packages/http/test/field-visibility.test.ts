import { SETUP_ACTOR } from '@people-service/domain/testing'
import t from 'tap'
import { SCOPES, type Scope } from '@people-service/domain'
import { POLICY, type Operation } from '@people-service/http'
import type { FastifyInstance } from 'fastify'
import { apiKeyOf, build, graphql, PASSWORD, postGraphQL, type Headers } from './helper.js'

/*
 * Scopes govern every field a response carries, whatever door it leaves by
 * (docs/API.md, "Safe retries and concurrent edits"): every REST route and
 * every GraphQL root field, for a key of every set of scopes, and no
 * response carries a person's data to a caller without people:read. Each
 * fixture's person and message hold a marker ("Secret …") that no such
 * response may contain, in its body or its headers; a person object it
 * carries has its id alone.
 */

/** Every subset of the scopes: 16 sets, the empty one included. */
const SCOPE_SETS: Scope[][] = Array.from({ length: 2 ** SCOPES.length }, (_, bits) => SCOPES.filter((_, i) => (bits & (1 << i)) !== 0))

let fixtures = 0
interface Fixture { person: string, friend: string, message: string, key: string, account: string, webhook: string, marker: string }

const fixtureOf = async (app: FastifyInstance, admin: Headers): Promise<Fixture> => {
  const marker = `Secret${++fixtures}x`
  const post = async (url: string, payload: object) => (await app.inject({ method: 'POST', url, headers: admin, payload })).json<{ id: string }>()
  const person = await post('/person', { name: `${marker} Ada`, age: 36, email: `${marker.toLowerCase()}@example.org`, address: { street: `${marker} Street`, city: `${marker} City`, country: 'UK' } })
  const friend = await post('/person', { name: `${marker} Bob`, email: `bob-${marker.toLowerCase()}@example.org` })
  await app.inject({ method: 'PUT', url: `/person/${person.id}/friends/${friend.id}`, headers: admin })
  const message = await post('/message', { personId: person.id, text: `${marker} message` })
  const key = await apiKeyOf(app, admin, { scopes: ['people:read'] })
  const account = await app.access.useCases.createAccount(SETUP_ACTOR, { username: `target-${fixtures}`, password: PASSWORD, role: 'viewer' })
  // Webhooks carry no person: the routes are asked about one that may or may not exist.
  const webhook = (await app.inject({ method: 'GET', url: '/webhooks', headers: admin })).json<Array<{ id: string }>>()[0]?.id ?? '0192f6c7-3333-7000-8000-000000000003'
  return { person: person.id, friend: friend.id, message: message.id, key: key.id, account: account.id, webhook, marker }
}

interface RouteCase { operation: Operation, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: (f: Fixture) => string, body?: (f: Fixture) => object }

/** Every REST route that answers an authenticated caller. */
const ROUTES: RouteCase[] = [
  { operation: 'people.list', method: 'GET', url: () => '/people' },
  { operation: 'person.get', method: 'GET', url: (f) => `/person/${f.person}` },
  { operation: 'person.create', method: 'POST', url: () => '/person', body: (f) => ({ name: `${f.marker} Cyd`, email: 'cyd@example.org' }) },
  { operation: 'person.create', method: 'POST', url: () => '/person', body: (f) => ({ id: f.person }) },
  { operation: 'person.update', method: 'PATCH', url: (f) => `/person/${f.person}`, body: () => ({}) },
  { operation: 'person.update', method: 'PUT', url: (f) => `/person/${f.person}`, body: () => ({ age: 37 }) },
  { operation: 'person.update', method: 'POST', url: (f) => `/person/${f.person}`, body: () => ({}) },
  { operation: 'person.delete', method: 'DELETE', url: (f) => `/person/${f.person}` },
  { operation: 'friends.list', method: 'GET', url: (f) => `/person/${f.person}/friends` },
  { operation: 'friends.add', method: 'PUT', url: (f) => `/person/${f.friend}/friends/${f.person}` },
  { operation: 'friends.remove', method: 'DELETE', url: (f) => `/person/${f.person}/friends/${f.friend}` },
  { operation: 'messages.list', method: 'GET', url: (f) => `/person/${f.person}/messages` },
  { operation: 'message.get', method: 'GET', url: (f) => `/message/${f.message}` },
  { operation: 'message.send', method: 'POST', url: () => '/message', body: (f) => ({ personId: f.person, text: 'hello' }) },
  { operation: 'users.create', method: 'POST', url: () => '/users', body: () => ({ username: `made-${++fixtures}`, password: 'a long enough password', role: 'viewer' }) },
  { operation: 'users.list', method: 'GET', url: () => '/users' },
  { operation: 'users.me', method: 'GET', url: () => '/users/me' },
  { operation: 'users.update', method: 'PATCH', url: (f) => `/users/${f.account}`, body: () => ({ role: 'editor' }) },
  { operation: 'users.delete', method: 'DELETE', url: (f) => `/users/${f.account}` },
  { operation: 'apiKeys.create', method: 'POST', url: () => '/api-keys', body: () => ({ name: 'k', scopes: [] }) },
  { operation: 'apiKeys.list', method: 'GET', url: () => '/api-keys' },
  { operation: 'apiKeys.revoke', method: 'DELETE', url: (f) => `/api-keys/${f.key}` },
  { operation: 'apiKeys.usage', method: 'GET', url: (f) => `/api-keys/${f.key}/usage` },
  { operation: 'events.list', method: 'GET', url: () => '/events' },
  { operation: 'webhooks.create', method: 'POST', url: () => '/webhooks', body: () => ({ url: 'https://hooks.example.org/in' }) },
  { operation: 'webhooks.list', method: 'GET', url: () => '/webhooks' },
  { operation: 'webhooks.get', method: 'GET', url: (f) => `/webhooks/${f.webhook}` },
  { operation: 'webhooks.update', method: 'PATCH', url: (f) => `/webhooks/${f.webhook}`, body: () => ({ description: 'changed' }) },
  { operation: 'webhooks.deliveries', method: 'GET', url: (f) => `/webhooks/${f.webhook}/deliveries` },
  { operation: 'webhooks.retry', method: 'POST', url: (f) => `/webhooks/${f.webhook}/deliveries/${f.person}/retry` },
  { operation: 'webhooks.delete', method: 'DELETE', url: (f) => `/webhooks/${f.webhook}` },
  { operation: 'auth.password', method: 'POST', url: () => '/auth/password', body: () => ({ currentPassword: PASSWORD, newPassword: PASSWORD }) },
  { operation: 'auth.login', method: 'POST', url: () => '/auth/login', body: () => ({ username: 'nobody', password: 'wrong password here' }) },
  { operation: 'root', method: 'GET', url: () => '/' },
  { operation: 'favicon', method: 'GET', url: () => '/favicon.ico' },
  { operation: 'health.live', method: 'GET', url: () => '/health/live' },
  { operation: 'health.ready', method: 'GET', url: () => '/health/ready' }
]

// Served by adapters other than REST routes: GraphQL below; the others carry no person.
const NOT_REST: Operation[] = ['graphql', 'graphiql', 'docs', 'openapi', 'metrics']

/** What of a response a caller without people:read must never find: the marker, or a person object holding more than its id. */
const leaks = (text: string, f: Fixture): string[] => {
  const found: string[] = []
  if (text.toLowerCase().includes(f.marker.toLowerCase())) found.push(`the marker ${f.marker}`)
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) { value.forEach(visit); return }
    if (typeof value !== 'object' || value === null) return
    const fields = Object.keys(value)
    for (const personal of ['name', 'age', 'email', 'address', 'createdAt', 'updatedAt', 'street', 'city']) {
      // An account's or key's own fields (username, name of a key) are not a person's.
      if (fields.includes(personal) && !fields.includes('username') && !fields.includes('scopes')) found.push(`a field ${personal}`)
    }
    Object.values(value).forEach(visit)
  }
  try { visit(JSON.parse(text)) } catch { /* not JSON: the marker check stands */ }
  return found
}

t.test('every REST operation is exercised here', async (t) => {
  const rest = (Object.keys(POLICY) as Operation[]).filter((op) => !NOT_REST.includes(op))
  t.same([...new Set(ROUTES.map((r) => r.operation))].sort(), rest.sort())
})

t.test('REST: no response to a key without people:read carries a person\'s data, whatever route and scopes', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 0 }, maxKeysPerAccount: 100_000 } })
  const keys = await Promise.all(SCOPE_SETS.map(async (scopes) => ({ scopes, headers: { 'x-api-key': (await apiKeyOf(app, admin, { scopes }))['x-api-key'] } })))
  let checked = 0
  for (const route of ROUTES) {
    for (const { scopes, headers } of keys) {
      if (scopes.includes('people:read')) continue
      const f = await fixtureOf(app, admin)
      const response = await app.inject({ method: route.method, url: route.url(f), headers, ...(route.body ? { payload: route.body(f) } : {}) })
      const label = `${route.method} ${route.url(f).replace(/[0-9a-f-]{36}/g, ':id')} ${JSON.stringify(route.body?.(f) ?? '').slice(0, 40)} as key [${scopes.join(' ')}] → ${response.statusCode}`
      t.same(leaks(`${JSON.stringify(response.headers)}\n${response.body}`, f), [], label)
      checked++
    }
  }
  t.equal(checked, ROUTES.length * 8, 'every route with each of the 8 sets of scopes without people:read')
})

t.test('REST: a write-only key writes a person and learns their id and ETag, no more', async (t) => {
  const { app, admin } = await build(t)
  const writer = { 'x-api-key': (await apiKeyOf(app, admin, { scopes: ['people:write'] }))['x-api-key'] }
  const f = await fixtureOf(app, admin)
  const cases: Array<[string, 'POST' | 'PATCH' | 'PUT', string, object, number]> = [
    ['PATCH /person/X {}', 'PATCH', `/person/${f.person}`, {}, 200],
    ['POST /person {"id": X}', 'POST', '/person', { id: f.person }, 200],
    ['POST /person/X {}', 'POST', `/person/${f.person}`, {}, 200],
    ['PUT /person/X {}', 'PUT', `/person/${f.person}`, {}, 200]
  ]
  for (const [label, method, url, payload, status] of cases) {
    const response = await app.inject({ method, url, headers: writer, payload })
    t.equal(response.statusCode, status, label)
    t.same(response.json(), { id: f.person }, `${label}: the id alone`)
    const now = await app.inject({ method: 'GET', url: `/person/${f.person}`, headers: admin })
    t.equal(response.headers.etag, now.headers.etag, `${label}: the person's ETag`)
  }
  const created = await app.inject({ method: 'POST', url: '/person', headers: { ...writer, 'idempotency-key': 'k1' }, payload: { name: 'Dee', email: 'dee@example.org' } })
  t.equal(created.statusCode, 201)
  const { id } = created.json<{ id: string }>()
  t.same(created.json(), { id }, 'a creation: the id alone')
  t.equal(created.headers.location, `/person/${id}`)
  const replayed = await app.inject({ method: 'POST', url: '/person', headers: { ...writer, 'idempotency-key': 'k1' }, payload: { name: 'Dee', email: 'dee@example.org' } })
  t.equal(replayed.headers['idempotent-replayed'], 'true')
  t.same(replayed.json(), { id }, 'its replay: the id alone')
  t.equal((await app.inject({ method: 'GET', url: `/person/${id}`, headers: writer })).statusCode, 403, 'reading stays refused')
  const full = await app.inject({ method: 'PATCH', url: `/person/${f.person}`, headers: admin, payload: {} })
  t.match(full.json(), { id: f.person, name: `${f.marker} Ada`, email: String }, 'a reader gets the whole person back')
})

/** Every root field of the schema, selecting everything a person or message has (full) and the id alone. */
interface RootCase { field: string, full: string, idOnly?: string, variables: (f: Fixture) => Record<string, unknown> }

const PERSON = 'id name age email address { street city country } friends(limit: 5) { id name } messages(limit: 2) { id text }'
const ROOT_FIELDS: RootCase[] = [
  { field: 'Query.person', full: `query ($p: ID!) { person(id: $p) { ${PERSON} } }`, variables: (f) => ({ p: f.person }) },
  { field: 'Query.people', full: `{ people(limit: 10) { ${PERSON} } }`, variables: () => ({}) },
  { field: 'Query.peopleConnection', full: `{ peopleConnection(first: 10) { edges { cursor node { ${PERSON} } } } }`, variables: () => ({}) },
  { field: 'Query.message', full: 'query ($m: ID!) { message(id: $m) { id text senderId person { name email } } }', variables: (f) => ({ m: f.message }) },
  { field: 'Mutation.createPerson', full: `mutation ($n: String!) { createPerson(input: { name: $n }) { ${PERSON} } }`, idOnly: 'mutation ($n: String!) { createPerson(input: { name: $n }) { id } }', variables: (f) => ({ n: `${f.marker} Eve` }) },
  { field: 'Mutation.updatePerson', full: `mutation ($p: ID!) { updatePerson(id: $p, input: {}) { ${PERSON} } }`, idOnly: 'mutation ($p: ID!) { updatePerson(id: $p, input: {}) { id __typename } }', variables: (f) => ({ p: f.person }) },
  { field: 'Mutation.deletePerson', full: 'mutation ($p: ID!) { deletePerson(id: $p) }', variables: (f) => ({ p: f.person }) },
  { field: 'Mutation.addFriend', full: `mutation ($p: ID!, $q: ID!) { addFriend(personId: $p, friendId: $q) { ${PERSON} } }`, idOnly: 'mutation ($p: ID!, $q: ID!) { addFriend(personId: $p, friendId: $q) { id } }', variables: (f) => ({ p: f.person, q: f.friend }) },
  { field: 'Mutation.removeFriend', full: 'mutation ($p: ID!, $q: ID!) { removeFriend(personId: $p, friendId: $q) { name email address { street city country } } }', idOnly: 'mutation ($p: ID!, $q: ID!) { removeFriend(personId: $p, friendId: $q) { id } }', variables: (f) => ({ p: f.person, q: f.friend }) },
  { field: 'Mutation.sendMessage', full: 'mutation ($p: ID!) { sendMessage(personId: $p, text: "hi") { id text senderId sentAt person { name email } } }', idOnly: 'mutation ($p: ID!) { sendMessage(personId: $p, text: "hi") { id text senderId sentAt } }', variables: (f) => ({ p: f.person }) }
]

t.test('GraphQL: no answer to a key without people:read carries a person\'s data, whatever root field and scopes', async (t) => {
  const { app, admin } = await build(t, { access: { limits: { max: 0 }, maxKeysPerAccount: 100_000 } })
  const schemaFields = (await graphql(app, { ...postGraphQL('{ __schema { queryType { fields { name } } mutationType { fields { name } } } }'), headers: { ...admin, 'content-type': 'application/json' } })).body.data as { __schema: Record<string, { fields: Array<{ name: string }> }> }
  const roots = [...schemaFields.__schema.queryType!.fields.map((f) => `Query.${f.name}`), ...schemaFields.__schema.mutationType!.fields.map((f) => `Mutation.${f.name}`)]
  t.same(ROOT_FIELDS.map((c) => c.field).sort(), roots.sort(), 'every root field of the schema (subscriptions: graphql-authorization.test.ts)')
  const keys = await Promise.all(SCOPE_SETS.map(async (scopes) => ({ scopes, headers: { 'x-api-key': (await apiKeyOf(app, admin, { scopes }))['x-api-key'] } })))
  for (const c of ROOT_FIELDS) {
    for (const { scopes, headers } of keys) {
      for (const query of [c.full, ...(c.idOnly ? [c.idOnly] : [])]) {
        const f = await fixtureOf(app, admin)
        const response = await app.inject({ ...postGraphQL(query, c.variables(f)), headers: { ...headers, 'content-type': 'application/json' } })
        const label = `${c.field} ${query === c.full ? 'whole' : 'id'} as key [${scopes.join(' ')}] → ${response.statusCode}`
        t.not(response.statusCode, 400, `${label}: the query is within every limit, so scopes alone decide`)
        if (scopes.includes('people:read')) continue
        t.same(leaks(response.body, f), [], label)
      }
    }
  }
})

t.test('GraphQL: a write-only key runs a mutation selecting the id; selecting more is 403 before it runs', async (t) => {
  const { app, admin } = await build(t)
  const writer = { 'x-api-key': (await apiKeyOf(app, admin, { scopes: ['people:write'] }))['x-api-key'], 'content-type': 'application/json' }
  const f = await fixtureOf(app, admin)
  const before = await app.inject({ method: 'GET', url: `/person/${f.person}/friends`, headers: admin })
  const refused = await graphql(app, { ...postGraphQL('mutation ($p: ID!, $q: ID!) { removeFriend(personId: $p, friendId: $q) { name email address { street city country } } }', { p: f.person, q: f.friend }), headers: writer })
  t.equal(refused.status, 403)
  t.same(refused.body.errors?.map((e) => e.message), ['Person.name needs the people:read scope', 'Person.email needs the people:read scope', 'Person.address needs the people:read scope', 'Address.street needs the people:read scope', 'Address.city needs the people:read scope', 'Address.country needs the people:read scope'])
  t.notOk('data' in refused.body, 'nothing ran')
  t.same((await app.inject({ method: 'GET', url: `/person/${f.person}/friends`, headers: admin })).json(), before.json(), 'the friendship is still there')
  const allowed = await graphql(app, { ...postGraphQL('mutation ($p: ID!, $q: ID!) { removeFriend(personId: $p, friendId: $q) { id } }', { p: f.person, q: f.friend }), headers: writer })
  t.same(allowed.body, { data: { removeFriend: { id: f.person } } })
  t.same((await app.inject({ method: 'GET', url: `/person/${f.person}/friends`, headers: admin })).json(), [], 'the friendship ended')
})
