import t from 'tap'
import { ROLES, SCOPES_OF_ROLE, type Role, type Scope } from '@people-service/domain'
import { GRAPHQL_FIELD_OPERATIONS } from '@people-service/http'
import { createClient } from 'graphql-ws'
import WebSocket from 'ws'
import type { FastifyInstance } from 'fastify'
import { apiKeyOf, build, callerIdOf, clientOf, getGraphQL, graphql, loginAs, postGraphQL, realServer, type Headers, type Injector } from './helper.js'

/*
 * The role/scope table through GraphQL: every field of the schema that has a
 * row in the policy table, for every role and for API keys of each scope.
 * What each field needs is written here from the contract (docs/API.md: reads
 * need people:read, changes to people and friendships people:write, sending
 * a message messages:send), not read from the implementation's table.
 */

/** The fields with a row of their own, and the person's fields the cases read (guarded by VISIBILITY in auth/policy.ts). */
type Field = keyof typeof GRAPHQL_FIELD_OPERATIONS | 'Person.name' | 'Person.age'

const NEEDS: Record<Field, Scope> = {
  // A person's fields but the id are for readers, whichever field reached them.
  'Person.name': 'people:read',
  'Person.age': 'people:read',
  'Query.person': 'people:read',
  'Query.people': 'people:read',
  'Query.peopleConnection': 'people:read',
  'Query.message': 'people:read',
  'Person.friends': 'people:read',
  'Person.friendsConnection': 'people:read',
  'Person.messages': 'people:read',
  'Person.messagesConnection': 'people:read',
  'Message.person': 'people:read',
  'Mutation.createPerson': 'people:write',
  'Mutation.updatePerson': 'people:write',
  'Mutation.deletePerson': 'people:write',
  'Mutation.addFriend': 'people:write',
  'Mutation.removeFriend': 'people:write',
  'Mutation.sendMessage': 'messages:send',
  'Subscription.messageSent': 'people:read'
}

/** What one case works on: fresh people for every request, so each starts from the same state. */
interface Fixture { tag: string, ada: string, bob: string, cyd: string, message: string, senderId: string }

interface Case {
  name: string
  /** Every governed field the operation selects. */
  fields: Field[]
  query: string
  variables: (f: Fixture) => Record<string, unknown>
  /** The data an allowed caller gets. */
  data: (f: Fixture) => Record<string, unknown>
}

const CASES: Case[] = [
  {
    name: 'person(id)',
    fields: ['Query.person', 'Person.name'],
    query: 'query ($id: ID!) { person(id: $id) { name } }',
    variables: (f) => ({ id: f.ada }),
    data: (f) => ({ person: { name: `Ada ${f.tag}` } })
  },
  {
    name: 'people',
    fields: ['Query.people', 'Person.name'],
    query: 'query ($tag: String) { people(name: $tag) { name } }',
    variables: (f) => ({ tag: f.tag }),
    data: (f) => ({ people: [{ name: `Ada ${f.tag}` }, { name: `Bob ${f.tag}` }, { name: `Cyd ${f.tag}` }] })
  },
  {
    name: 'peopleConnection',
    fields: ['Query.peopleConnection', 'Person.name'],
    query: 'query ($tag: String) { peopleConnection(first: 2, name: $tag) { edges { node { name } } pageInfo { hasNextPage } } }',
    variables: (f) => ({ tag: f.tag }),
    data: (f) => ({ peopleConnection: { edges: [{ node: { name: `Ada ${f.tag}` } }, { node: { name: `Bob ${f.tag}` } }], pageInfo: { hasNextPage: true } } })
  },
  {
    name: 'message(id)',
    fields: ['Query.message'],
    query: 'query ($id: ID!) { message(id: $id) { text } }',
    variables: (f) => ({ id: f.message }),
    data: () => ({ message: { text: 'hello' } })
  },
  {
    name: 'Person.friends',
    fields: ['Query.person', 'Person.friends', 'Person.name'],
    query: 'query ($id: ID!) { person(id: $id) { friends { name } } }',
    variables: (f) => ({ id: f.ada }),
    data: (f) => ({ person: { friends: [{ name: `Bob ${f.tag}` }] } })
  },
  {
    name: 'Person.friendsConnection',
    fields: ['Query.person', 'Person.friendsConnection', 'Person.name'],
    query: 'query ($id: ID!) { person(id: $id) { friendsConnection { edges { node { name } } } } }',
    variables: (f) => ({ id: f.ada }),
    data: (f) => ({ person: { friendsConnection: { edges: [{ node: { name: `Bob ${f.tag}` } }] } } })
  },
  {
    name: 'Person.messages',
    fields: ['Query.person', 'Person.messages'],
    query: 'query ($id: ID!) { person(id: $id) { messages { text } } }',
    variables: (f) => ({ id: f.ada }),
    data: () => ({ person: { messages: [{ text: 'hello' }] } })
  },
  {
    name: 'Person.messagesConnection',
    fields: ['Query.person', 'Person.messagesConnection'],
    query: 'query ($id: ID!) { person(id: $id) { messagesConnection { edges { node { text } } pageInfo { hasNextPage } } } }',
    variables: (f) => ({ id: f.ada }),
    data: () => ({ person: { messagesConnection: { edges: [{ node: { text: 'hello' } }], pageInfo: { hasNextPage: false } } } })
  },
  {
    name: 'Message.person',
    fields: ['Query.message', 'Message.person', 'Person.name'],
    query: 'query ($id: ID!) { message(id: $id) { person { name } } }',
    variables: (f) => ({ id: f.message }),
    data: (f) => ({ message: { person: { name: `Ada ${f.tag}` } } })
  },
  {
    name: 'createPerson',
    fields: ['Mutation.createPerson', 'Person.name'],
    query: 'mutation ($name: String!) { createPerson(input: { name: $name }) { name } }',
    variables: (f) => ({ name: `Dee ${f.tag}` }),
    data: (f) => ({ createPerson: { name: `Dee ${f.tag}` } })
  },
  {
    name: 'updatePerson',
    fields: ['Mutation.updatePerson', 'Person.age'],
    query: 'mutation ($id: ID!) { updatePerson(id: $id, input: { age: 99 }) { age } }',
    variables: (f) => ({ id: f.ada }),
    data: () => ({ updatePerson: { age: 99 } })
  },
  {
    name: 'deletePerson',
    fields: ['Mutation.deletePerson'],
    query: 'mutation ($id: ID!) { deletePerson(id: $id) }',
    variables: (f) => ({ id: f.cyd }),
    data: (f) => ({ deletePerson: f.cyd })
  },
  {
    name: 'addFriend',
    fields: ['Mutation.addFriend', 'Person.name'],
    query: 'mutation ($a: ID!, $c: ID!) { addFriend(personId: $a, friendId: $c) { name } }',
    variables: (f) => ({ a: f.ada, c: f.cyd }),
    data: (f) => ({ addFriend: { name: `Ada ${f.tag}` } })
  },
  {
    name: 'removeFriend',
    fields: ['Mutation.removeFriend', 'Person.name'],
    query: 'mutation ($a: ID!, $b: ID!) { removeFriend(personId: $a, friendId: $b) { name } }',
    variables: (f) => ({ a: f.ada, b: f.bob }),
    data: (f) => ({ removeFriend: { name: `Ada ${f.tag}` } })
  },
  {
    name: 'sendMessage',
    fields: ['Mutation.sendMessage'],
    query: 'mutation ($a: ID!) { sendMessage(personId: $a, text: "sent") { text senderId } }',
    variables: (f) => ({ a: f.ada }),
    data: (f) => ({ sendMessage: { text: 'sent', senderId: f.senderId } })
  },
  // A mutation the caller may run, selecting a field it may not read: the
  // whole request is refused before the mutation runs.
  {
    name: 'addFriend reading friends',
    fields: ['Mutation.addFriend', 'Person.friends', 'Person.name'],
    query: 'mutation ($a: ID!, $c: ID!) { addFriend(personId: $a, friendId: $c) { friends { name } } }',
    variables: (f) => ({ a: f.ada, c: f.cyd }),
    data: (f) => ({ addFriend: { friends: [{ name: `Bob ${f.tag}` }, { name: `Cyd ${f.tag}` }] } })
  },
  {
    name: 'sendMessage reading its person',
    fields: ['Mutation.sendMessage', 'Message.person', 'Person.name'],
    query: 'mutation ($a: ID!) { sendMessage(personId: $a, text: "sent") { person { name } } }',
    variables: (f) => ({ a: f.ada }),
    data: (f) => ({ sendMessage: { person: { name: `Ada ${f.tag}` } } })
  },
  // Fields reached through fragments are checked where they are spread.
  {
    name: 'a mutation inside a fragment',
    fields: ['Mutation.deletePerson'],
    query: 'mutation ($id: ID!) { ...gone } fragment gone on Mutation { deletePerson(id: $id) }',
    variables: (f) => ({ id: f.cyd }),
    data: (f) => ({ deletePerson: f.cyd })
  },
  {
    name: 'friends inside an inline fragment',
    fields: ['Query.person', 'Person.friends', 'Person.name'],
    query: 'query ($id: ID!) { person(id: $id) { ... on Person { friends { name } } } }',
    variables: (f) => ({ id: f.ada }),
    data: (f) => ({ person: { friends: [{ name: `Bob ${f.tag}` }] } })
  }
]

interface Caller { name: string, headers: Headers, scopes: readonly Scope[] }

const KEY_SCOPES: Scope[][] = [['people:read'], ['people:write'], ['messages:send'], ['people:write', 'messages:send'], ['people:read', 'people:write', 'messages:send', 'admin']]

const callersOf = async (app: FastifyInstance, admin: Headers): Promise<Caller[]> => [
  ...await Promise.all(ROLES.map(async (role: Role) => ({ name: `${role} account`, headers: await loginAs(app, role), scopes: SCOPES_OF_ROLE[role] }))),
  ...await Promise.all(KEY_SCOPES.map(async (scopes) => {
    const { 'x-api-key': key } = await apiKeyOf(app, admin, { scopes })
    return { name: `key [${scopes.join(' ')}]`, headers: { 'x-api-key': key }, scopes }
  }))
]

let fixtures = 0
const fixture = async (api: Injector, senderId: string): Promise<Fixture> => {
  const tag = `[${++fixtures}]`
  const post = async (url: string, payload: object) => (await api.inject({ method: 'POST', url, payload })).json<{ id: string }>()
  const ada = await post('/person', { name: `Ada ${tag}` })
  const bob = await post('/person', { name: `Bob ${tag}` })
  const cyd = await post('/person', { name: `Cyd ${tag}` })
  await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${bob.id}` })
  const message = await post('/message', { personId: ada.id, text: 'hello' })
  return { tag, ada: ada.id, bob: bob.id, cyd: cyd.id, message: message.id, senderId }
}

/** Everything a case could change, as the admin reads it over REST. */
const snapshot = async (api: Injector, f: Fixture): Promise<unknown> => Promise.all([
  `/people?name=${encodeURIComponent(f.tag)}`,
  ...[f.ada, f.bob, f.cyd].flatMap((id) => [`/person/${id}`, `/person/${id}/friends`, `/person/${id}/messages`])
].map(async (url) => {
  const response = await api.inject({ method: 'GET', url })
  return [url, response.statusCode, response.json()]
}))

t.test('every governed GraphQL field is exercised here', async (t) => {
  const covered = new Set<string>([...CASES.flatMap((c) => c.fields), 'Subscription.messageSent'])
  const governed = [...Object.keys(GRAPHQL_FIELD_OPERATIONS), 'Person.name', 'Person.age'].sort()
  t.same([...covered].sort(), governed)
  t.same(Object.keys(NEEDS).sort(), governed)
})

t.test('the role table through GraphQL: every field × every role and key scope', async (t) => {
  const { app, api, admin } = await build(t, { access: { limits: { max: 0 } } })
  const callers = await callersOf(app, admin)
  for (const caller of callers) {
    const client = clientOf(app, caller.headers)
    const senderId = await callerIdOf(app, caller.headers)
    for (const c of CASES) {
      const f = await fixture(api, senderId)
      const label = `${c.name} as ${caller.name}`
      const missing = [...new Set(c.fields.filter((field) => !caller.scopes.includes(NEEDS[field])))]
      const before = await snapshot(api, f)
      const { status, body } = await graphql(client, postGraphQL(c.query, c.variables(f)))
      if (missing.length === 0) {
        t.equal(status, 200, label)
        t.same(body, { data: c.data(f) }, label)
      } else {
        t.equal(status, 403, label)
        t.notOk('data' in body, `${label}: no data, nothing ran`)
        t.same(body.errors?.map((e) => ({ message: e.message, code: e.extensions?.code })),
          missing.map((field) => ({ message: `${field} needs the ${NEEDS[field]} scope`, code: 'FORBIDDEN' })), label)
        t.match(body.errors, missing.map(() => ({ locations: [{ line: Number, column: Number }] })), `${label}: each error points at its field`)
        t.same(await snapshot(api, f), before, `${label}: nothing changed`)
      }
    }
  }
})

t.test('@skip and @include: a field execution would not run is not checked; one it would run is', async (t) => {
  const { app, api } = await build(t)
  const viewer = clientOf(app, await loginAs(app, 'viewer'))
  const f = await fixture(api, 'unused')
  const document = 'query Read ($id: ID!) { person(id: $id) { name } } mutation Delete ($id: ID!) { deletePerson(id: $id) }'
  const read = await graphql(viewer, postGraphQL(document, { id: f.cyd }, 'Read'))
  t.same(read.body, { data: { person: { name: `Cyd ${f.tag}` } } }, 'only the operation that runs is checked, not the others in the document')
  t.equal((await graphql(viewer, postGraphQL(document, { id: f.cyd }, 'Delete'))).status, 403)
  const skipped = await graphql(viewer, postGraphQL('mutation ($id: ID!, $yes: Boolean!) { deletePerson(id: $id) @include(if: $yes) }', { id: f.cyd, yes: false }))
  t.equal(skipped.status, 200, 'a skipped mutation needs no scope: it does not run')
  t.same(skipped.body, { data: {} })
  const included = await graphql(viewer, postGraphQL('mutation ($id: ID!, $yes: Boolean = true) { deletePerson(id: $id) @include(if: $yes) }', { id: f.cyd }))
  t.equal(included.status, 403, 'a variable\'s default decides as execution would')
  t.equal((await api.inject({ method: 'GET', url: `/person/${f.cyd}` })).statusCode, 200, 'and the person is still there')
  const nested = await graphql(clientOf(app, { 'x-api-key': (await apiKeyOf(app, await loginAs(app, 'admin'), { scopes: ['people:write'] }))['x-api-key'] }),
    postGraphQL('mutation ($id: ID!, $no: Boolean!) { updatePerson(id: $id, input: { age: 1 }) { name friends @skip(if: $no) { name } } }', { id: f.ada, no: false }))
  t.equal(nested.status, 403, 'a nested field kept by @skip(if: false) is checked')
  t.equal((await api.inject({ method: 'GET', url: `/person/${f.ada}` })).json<{ age: unknown }>().age, null, 'the update did not run')
})

t.test('GraphQL needs credentials: 401 on GET and POST, in GraphQL shape', async (t) => {
  const { app, api } = await build(t)
  const f = await fixture(api, 'unused')
  const requests = [
    getGraphQL('{ people { id } }'),
    postGraphQL('{ people { id } }'),
    postGraphQL('mutation ($id: ID!) { deletePerson(id: $id) }', { id: f.cyd }),
    { ...getGraphQL('{ people { id } }'), headers: { accept: 'application/graphql-response+json' } },
    { ...postGraphQL('{ people { id } }'), headers: { 'content-type': 'application/json', authorization: 'Bearer not-a-token' } },
    { ...postGraphQL('{ people { id } }'), headers: { 'content-type': 'application/json', 'x-api-key': 'ps_nope' } }
  ]
  for (const request of requests) {
    const response = await app.inject(request)
    const label = `${request.method} ${JSON.stringify(request.headers ?? {})}`
    t.equal(response.statusCode, 401, label)
    t.equal(response.headers['www-authenticate'], 'Bearer realm="people-service"', label)
    t.match(response.headers['content-type'], request.headers?.accept === 'application/graphql-response+json' ? /^application\/graphql-response\+json/ : /^application\/json/)
    const body = response.json<{ errors: Array<{ extensions: { code: string } }> }>()
    t.same(Object.keys(body), ['errors'], `${label}: errors, no data`)
    t.equal(body.errors.length, 1)
    t.equal(body.errors[0]?.extensions.code, 'UNAUTHENTICATED', label)
    t.notOk(response.headers['ratelimit-limit'], 'no budget is claimed for an unknown caller')
  }
  t.equal((await api.inject({ method: 'GET', url: `/person/${f.cyd}` })).statusCode, 200, 'nothing ran')
  const fakeUpgrade = await app.inject({ ...getGraphQL('{ people { id } }'), headers: { upgrade: 'websocket', connection: 'upgrade' } })
  t.equal(fakeUpgrade.statusCode, 401, 'an HTTP request that only claims to upgrade is authenticated like any other')
})

t.test('a GraphQL request counts once against the caller\'s budget; past it, 429 with Retry-After', async (t) => {
  const { app } = await build(t, { access: { limits: { max: 3, windowMs: 60_000 } } })
  const alice = clientOf(app, await loginAs(app, 'editor'))
  const bob = clientOf(app, await loginAs(app, 'editor'))
  const many = '{ a: people(limit: 1) { id } b: people(limit: 2) { id friends { id } } c: message(id: "x") { id } }'
  const requests = [postGraphQL(many), getGraphQL(many), postGraphQL('mutation { createPerson(input: { name: "Ada" }) { id } }')]
  for (const [i, request] of requests.entries()) {
    const { status, response } = await graphql(alice, request)
    t.equal(status, 200)
    t.equal(response.headers['ratelimit-limit'], '3')
    t.equal(response.headers['ratelimit-remaining'], String(2 - i), `${request.method}: one request, however many fields`)
  }
  for (const request of [postGraphQL('{ people { id } }'), getGraphQL('{ people { id } }')]) {
    const { status, body, response } = await graphql(alice, request)
    t.equal(status, 429, String(request.method))
    t.ok(Number(response.headers['retry-after']) > 0, 'Retry-After')
    t.equal(response.headers['ratelimit-remaining'], '0')
    t.match(body, { errors: [{ message: /3 requests per 60 s/, extensions: { code: 'RATE_LIMITED' } }] })
    t.notOk('data' in body)
  }
  const limitedMutation = await graphql(alice, postGraphQL('mutation { createPerson(input: { name: "Bob" }) { id } }'))
  t.equal(limitedMutation.status, 429, 'nothing runs past the budget')
  t.same((await graphql(bob, getGraphQL('{ people { name } }'))).body, { data: { people: [{ name: 'Ada' }] } }, 'another caller is unaffected; the refused mutation did not run')
  const viaRest = await alice.inject({ method: 'GET', url: '/people' })
  t.equal(viaRest.statusCode, 429, 'one budget for REST and GraphQL')
})

t.test('a subscription for every role and key scope: allowed ones receive a message sent over REST, others are refused', async (t) => {
  const { app, url, admin } = await realServer(t)
  const callers = await callersOf(app, admin)
  const ada = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: { name: 'Ada' } })).json<{ id: string }>()
  for (const caller of callers) {
    const client = createClient({ url: `${url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0, lazy: false, connectionParams: caller.headers })
    t.teardown(() => client.dispose())
    const outcome = new Promise<unknown>((resolve) => {
      client.subscribe({ query: 'subscription { messageSent { text senderId } }' }, {
        next: (value) => resolve(value), error: (error) => resolve(error), complete: () => resolve('completed')
      })
    })
    const label = `messageSent as ${caller.name}`
    if (caller.scopes.includes('people:read')) {
      // Send until one arrives: graphql-ws never acknowledges a subscription.
      let arrived: unknown
      for (let attempt = 0; arrived === undefined && attempt < 50; attempt++) {
        await app.inject({ method: 'POST', url: '/message', headers: admin, payload: { personId: ada.id, text: `to ${caller.name}` } })
        arrived = await Promise.race([outcome, new Promise((resolve) => setTimeout(() => resolve(undefined), 100))])
      }
      t.same(arrived, { data: { messageSent: { text: `to ${caller.name}`, senderId: await callerIdOf(app, admin) } } }, label)
    } else {
      // Refused before it subscribes, as the same operation over HTTP is (no path: nothing ran).
      t.same(await outcome, [{
        message: 'Subscription.messageSent needs the people:read scope',
        locations: [{ line: 1, column: 16 }],
        extensions: { code: 'FORBIDDEN' }
      }], label)
    }
    await client.dispose()
  }
})
