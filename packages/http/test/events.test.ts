import t, { type Test } from 'tap'
import { CloudEvent } from 'cloudevents'
import { createRepositories } from '@people-service/infra'
import { GRAPHQL_FIELD_OPERATIONS } from '../src/auth/policy.js'
import { apiKeyOf, callerIdOf, PASSWORD, realServer, type Headers } from './helper.js'

/*
 * The event log through the real server on a SQLite file, over HTTP: every
 * change records exactly its event (REST and GraphQL), valid CloudEvents
 * 1.0, and GET /events pages, filters, waits and expires as docs/API.md says.
 */

interface Answer { status: number, headers: globalThis.Headers, body: any }

interface Event {
  specversion: string
  id: string
  source: string
  type: string
  subject: string
  time: string
  datacontenttype: string
  actorkind: string
  actorid: string
  data: Record<string, unknown>
}

const client = (url: string) => async (method: string, path: string, headers: Headers = {}, body?: unknown): Promise<Answer> => {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }
}

const nextOf = (answer: Answer): string => {
  const link = answer.headers.get('link') ?? ''
  const match = /^<([^>]+)>; rel="next"$/.exec(link)
  if (match === null) throw new Error(`no Link rel="next": ${link}`)
  return match[1]!
}

/** What must never be in an event: the password given, password hashes, key secrets and their hashes. */
const SECRET_MARKS = ['scrypt', 'secretHash', 'secret_hash', 'passwordHash', 'password_hash', 'lookupId', 'tokenVersion', 'ps_']

const setup = async (t: Test) => {
  const server = await realServer(t, { eventWaits: { perCaller: 2, pollMs: 200 } })
  const call = client(server.url)
  const admin = server.admin
  const adminId = await callerIdOf(server.app, admin)
  const keyOwner = await apiKeyOf(server.app, admin, { name: 'writer', scopes: ['people:read', 'people:write', 'messages:send'] })
  const key = { 'x-api-key': keyOwner['x-api-key'] }
  // The log so far (the admin, its key); each case reads what comes after.
  let cursor = nextOf(await call('GET', '/events?limit=1000', admin))
  /** The events recorded since the last call, in order, following every page. */
  const newEvents = async (): Promise<Event[]> => {
    const seen: Event[] = []
    for (;;) {
      const answer = await call('GET', cursor, admin)
      if (answer.status !== 200) throw new Error(`GET ${cursor}: ${answer.status} ${JSON.stringify(answer.body)}`)
      cursor = nextOf(answer)
      seen.push(...answer.body as Event[])
      if ((answer.body as Event[]).length === 0) return seen
    }
  }
  return { ...server, call, admin, adminId, key, keyId: keyOwner.id, newEvents }
}

t.test('every change records exactly its event, through REST and GraphQL, and nothing else does', async (t) => {
  const { call, admin, adminId, key, keyId, newEvents } = await setup(t)
  const asAdmin = { kind: 'account', id: adminId }
  const asKey = { kind: 'apikey', id: keyId }
  const graphql = async (headers: Headers, query: string, variables: Record<string, unknown> = {}) => {
    const answer = await call('POST', '/graphql', headers, { query, variables })
    if (answer.body?.errors !== undefined) throw new Error(JSON.stringify(answer.body.errors))
    return answer.body.data
  }

  const ada = (await call('POST', '/person', key, { name: 'Ada', age: 36 })).body
  const grace = (await call('POST', '/person', admin, { name: 'Grace' })).body
  t.match(await newEvents(), [
    { type: 'person.created', subject: `/person/${ada.id}`, actorkind: 'apikey', actorid: keyId, data: ada },
    { type: 'person.created', subject: `/person/${grace.id}`, actorkind: 'account', actorid: adminId, data: grace }
  ], 'setup: two people')
  let shadow: { id: string } | undefined
  let account: { id: string } | undefined
  let apiKey: { id: string, key: string } | undefined
  let viewerToken: Headers = {}

  interface Case {
    /** The operation, as its route (`METHOD /path`) or GraphQL field. */
    door: string
    change: () => Promise<unknown>
    /** Each event the change records: type, subject and actor; `data` when given, exactly. */
    expect: () => Array<{ type: string, subject: string, actor: { kind: string, id: string }, data?: unknown }>
  }
  const ok = (status: number) => async (answer: Promise<Answer>) => {
    const { status: got, body } = await answer
    if (got !== status) throw new Error(`${got}: ${JSON.stringify(body)}`)
    return body
  }
  let last: any
  const CASES: Case[] = [
    { door: 'POST /person', change: async () => { last = await ok(201)(call('POST', '/person', key, { name: 'Alan' })) }, expect: () => [{ type: 'person.created', subject: `/person/${last.id}`, actor: asKey, data: last }] },
    { door: 'POST /person (Idempotency-Key, then repeated)', change: async () => { for (let i = 0; i < 2; i++) last = await ok(201)(call('POST', '/person', { ...key, 'idempotency-key': 'k1' }, { name: 'Once' })) }, expect: () => [{ type: 'person.created', subject: `/person/${last.id}`, actor: asKey, data: last }] },
    { door: 'PATCH /person/{id}', change: async () => { last = await ok(200)(call('PATCH', `/person/${ada.id}`, key, { email: 'ada@example.org' })) }, expect: () => [{ type: 'person.updated', subject: `/person/${ada.id}`, actor: asKey, data: last }] },
    { door: 'PUT /person/{id}', change: async () => { last = await ok(200)(call('PUT', `/person/${ada.id}`, admin, { age: 37 })) }, expect: () => [{ type: 'person.updated', subject: `/person/${ada.id}`, actor: asAdmin, data: last }] },
    { door: 'POST /person/{id}', change: async () => { last = await ok(200)(call('POST', `/person/${ada.id}`, admin, { address: { city: 'London' } })) }, expect: () => [{ type: 'person.updated', subject: `/person/${ada.id}`, actor: asAdmin, data: last }] },
    { door: 'POST /person (with id)', change: async () => { last = await ok(200)(call('POST', '/person', admin, { id: ada.id, age: 38 })) }, expect: () => [{ type: 'person.updated', subject: `/person/${ada.id}`, actor: asAdmin, data: last }] },
    { door: 'PUT /person/{id} that changes nothing', change: () => ok(200)(call('PUT', `/person/${ada.id}`, admin, { age: 38 })), expect: () => [] },
    { door: 'PUT /person/{id}/friends/{friendId} (twice)', change: async () => { for (let i = 0; i < 2; i++) await ok(200)(call('PUT', `/person/${ada.id}/friends/${grace.id}`, key)) }, expect: () => [{ type: 'friendship.created', subject: `/person/${ada.id}/friends/${grace.id}`, actor: asKey, data: { personId: ada.id, friendId: grace.id } }] },
    { door: 'DELETE /person/{id}/friends/{friendId} (twice)', change: async () => { for (let i = 0; i < 2; i++) await ok(200)(call('DELETE', `/person/${grace.id}/friends/${ada.id}`, admin)) }, expect: () => [{ type: 'friendship.deleted', subject: `/person/${grace.id}/friends/${ada.id}`, actor: asAdmin, data: { personId: grace.id, friendId: ada.id } }] },
    { door: 'POST /message', change: async () => { last = await ok(201)(call('POST', '/message', key, { personId: ada.id, text: 'hello' })) }, expect: () => [{ type: 'message.sent', subject: `/message/${last.id}`, actor: asKey, data: last }] },
    { door: 'POST /message (Idempotency-Key, then repeated)', change: async () => { for (let i = 0; i < 2; i++) last = await ok(201)(call('POST', '/message', { ...admin, 'idempotency-key': 'm1' }, { personId: ada.id, text: 'once' })) }, expect: () => [{ type: 'message.sent', subject: `/message/${last.id}`, actor: asAdmin, data: last }] },
    { door: 'DELETE /person/{id}', change: async () => { last = await ok(201)(call('POST', '/person', admin, { name: 'Gone' })); await ok(200)(call('DELETE', `/person/${last.id}`, key)) }, expect: () => [{ type: 'person.created', subject: `/person/${last.id}`, actor: asAdmin }, { type: 'person.deleted', subject: `/person/${last.id}`, actor: asKey, data: { id: last.id } }] },
    { door: 'POST /users', change: async () => { account = await ok(201)(call('POST', '/users', admin, { username: 'vera', password: PASSWORD, role: 'viewer' })) }, expect: () => [{ type: 'account.created', subject: `/users/${account!.id}`, actor: asAdmin, data: account }] },
    { door: 'PATCH /users/{id}', change: async () => { last = await ok(200)(call('PATCH', `/users/${account!.id}`, admin, { role: 'editor' })) }, expect: () => [{ type: 'account.updated', subject: `/users/${account!.id}`, actor: asAdmin, data: last }] },
    { door: 'PATCH /users/{id} that changes nothing', change: () => ok(200)(call('PATCH', `/users/${account!.id}`, admin, { role: 'editor' })), expect: () => [] },
    {
      door: 'POST /auth/password',
      change: async () => {
        viewerToken = { authorization: `Bearer ${(await ok(200)(call('POST', '/auth/login', {}, { username: 'vera', password: PASSWORD }))).access_token as string}` }
        await ok(200)(call('POST', '/auth/password', viewerToken, { currentPassword: PASSWORD, newPassword: `${PASSWORD} again` }))
      },
      expect: () => [{ type: 'account.updated', subject: `/users/${account!.id}`, actor: { kind: 'account', id: account!.id }, data: { ...account, role: 'editor' } }]
    },
    { door: 'POST /api-keys', change: async () => { apiKey = await ok(201)(call('POST', '/api-keys', admin, { name: 'reporting', scopes: ['people:read'] })) }, expect: () => { const { key: _secret, ...view } = apiKey!; return [{ type: 'apikey.created', subject: `/api-keys/${apiKey!.id}`, actor: asAdmin, data: view }] } },
    { door: 'DELETE /api-keys/{id}', change: () => ok(200)(call('DELETE', `/api-keys/${apiKey!.id}`, admin)), expect: () => [{ type: 'apikey.deleted', subject: `/api-keys/${apiKey!.id}`, actor: asAdmin, data: { id: apiKey!.id } }] },
    { door: 'DELETE /users/{id}', change: () => ok(200)(call('DELETE', `/users/${account!.id}`, admin)), expect: () => [{ type: 'account.deleted', subject: `/users/${account!.id}`, actor: asAdmin, data: { id: account!.id } }] },
    { door: 'Mutation.createPerson', change: async () => { shadow = (await graphql(key, 'mutation { createPerson(input: { name: "Edsger" }) { id } }')).createPerson }, expect: () => [{ type: 'person.created', subject: `/person/${shadow!.id}`, actor: asKey }] },
    { door: 'Mutation.updatePerson', change: () => graphql(admin, 'mutation ($id: ID!) { updatePerson(id: $id, input: { age: 72 }) { id } }', { id: shadow!.id }), expect: () => [{ type: 'person.updated', subject: `/person/${shadow!.id}`, actor: asAdmin }] },
    { door: 'Mutation.addFriend', change: () => graphql(key, 'mutation ($a: ID!, $b: ID!) { addFriend(personId: $a, friendId: $b) { id } }', { a: shadow!.id, b: grace.id }), expect: () => [{ type: 'friendship.created', subject: `/person/${shadow!.id}/friends/${grace.id}`, actor: asKey }] },
    { door: 'Mutation.removeFriend', change: () => graphql(key, 'mutation ($a: ID!, $b: ID!) { removeFriend(personId: $a, friendId: $b) { id } }', { a: shadow!.id, b: grace.id }), expect: () => [{ type: 'friendship.deleted', subject: `/person/${shadow!.id}/friends/${grace.id}`, actor: asKey }] },
    { door: 'Mutation.sendMessage', change: async () => { last = (await graphql(admin, 'mutation ($p: ID!) { sendMessage(personId: $p, text: "hi") { id } }', { p: grace.id })).sendMessage }, expect: () => [{ type: 'message.sent', subject: `/message/${last.id}`, actor: asAdmin }] },
    { door: 'Mutation.deletePerson', change: () => graphql(admin, 'mutation ($id: ID!) { deletePerson(id: $id) }', { id: shadow!.id }), expect: () => [{ type: 'person.deleted', subject: `/person/${shadow!.id}`, actor: asAdmin, data: { id: shadow!.id } }] }
  ]

  for (const { door, change, expect } of CASES) {
    await change()
    const events = await newEvents()
    const wanted = expect()
    t.same(events.map((e) => [e.type, e.subject, e.actorkind, e.actorid]), wanted.map((w) => [w.type, w.subject, w.actor.kind, w.actor.id]), `${door}: exactly its events`)
    wanted.forEach((w, i) => { if (w.data !== undefined) t.same(events[i]?.data, w.data, `${door}: the data is the resource as its GET answers`) })
    for (const event of events) {
      const text = JSON.stringify(event)
      t.notOk(SECRET_MARKS.some((mark) => text.includes(mark)) || text.includes(PASSWORD), `${door}: no secret in ${event.type}`)
    }
  }

  // Every door that changes state is a case: the OpenAPI document's writes and the GraphQL mutations.
  const document = (await call('GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> }
  const writes = Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).filter((method) => ['post', 'put', 'patch', 'delete'].includes(method)).map((method) => `${method.toUpperCase()} ${path}`))
  // Webhooks are where events go, not resources of their own: the contract's event types name none of them.
  const notChanges = new Set([
    'POST /auth/login', 'POST /graphql',
    'POST /webhooks', 'PATCH /webhooks/{id}', 'DELETE /webhooks/{id}', 'POST /webhooks/{id}/deliveries/{deliveryId}/retry'
  ])
  // A case's door, without what it says of how the door is used ("(twice)", "that changes nothing").
  const covered = new Set(CASES.map((c) => c.door.replace(/ \(.*\)$| that changes nothing$/, '')))
  t.same(writes.filter((door) => !notChanges.has(door) && !covered.has(door)), [], 'every REST write is a case')
  t.same(Object.keys(GRAPHQL_FIELD_OPERATIONS).filter((field) => field.startsWith('Mutation.') && !covered.has(field)), [], 'every GraphQL mutation is a case')

  // Changes that fail record nothing: their transaction leaves no event.
  const nobody = '01900000-0000-7000-8000-0000000000ff'
  const failures: Array<[string, Promise<Answer>, number]> = [
    ['a message to nobody', call('POST', '/message', key, { personId: nobody, text: 'lost' }), 404],
    ['a friendship with nobody', call('PUT', `/person/${ada.id}/friends/${nobody}`, key), 404],
    ['a taken username', call('POST', '/users', admin, { username: 'admin-1', password: PASSWORD, role: 'viewer' }), 409],
    ['a stale If-Match', call('PATCH', `/person/${ada.id}`, { ...key, 'if-match': '"1"' }, { age: 1 }), 412],
    ['an invalid person', call('POST', '/person', key, { name: '' }), 400]
  ]
  for (const [what, answer, status] of failures) t.equal((await answer).status, status, what)
  t.same(await newEvents(), [], 'failed changes recorded nothing')
})

t.test('events are valid CloudEvents 1.0 (the cloudevents SDK\'s validation)', async (t) => {
  const { call, admin, key, newEvents } = await setup(t)
  const ada = (await call('POST', '/person', key, { name: 'Ada', address: { city: 'London' } })).body
  await call('PUT', `/person/${ada.id}/friends/${ada.id}`, key)
  await call('POST', '/message', key, { personId: ada.id, text: 'hello\nthere' })
  await call('DELETE', `/person/${ada.id}`, admin)
  const events = await newEvents()
  t.equal(events.length, 3)
  for (const event of events) {
    t.doesNotThrow(() => new CloudEvent(event as any, true).validate(), `${event.type} validates`)
    t.match(event, { specversion: '1.0', source: '/people-service', datacontenttype: 'application/json', time: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ })
  }
  t.throws(() => new CloudEvent({ ...events[0], type: '' } as any, true).validate(), 'the validator does refuse a broken event')
})

t.test('GET /events: pages oldest first with a Link on every page, filters, refuses bad input', async (t) => {
  const { call, admin, key, newEvents, url } = await setup(t)
  await newEvents()
  const start = nextOf(await call('GET', '/events?limit=1000', admin))
  const people = []
  for (const name of ['A', 'B', 'C', 'D', 'E']) people.push((await call('POST', '/person', key, { name })).body)
  await call('PATCH', `/person/${people[2].id}`, key, { name: 'C2' })
  const cursorOf = (link: string) => new URL(link, 'http://x').searchParams.get('cursor')!

  const pages: string[][] = []
  let next = `/events?limit=2&cursor=${cursorOf(start)}`
  for (;;) {
    const page = await call('GET', next, admin)
    t.equal(page.status, 200)
    next = nextOf(page)
    t.match(next, /limit=2/, 'the Link keeps the other parameters')
    if (page.body.length === 0) break
    pages.push(page.body.map((e: Event) => `${e.type} ${e.data.name as string}`))
  }
  t.same(pages, [['person.created A', 'person.created B'], ['person.created C', 'person.created D'], ['person.created E', 'person.updated C2']], 'oldest first, in pages')
  t.same((await call('GET', next, admin)).body, [], 'the last Link leads to an empty page, with a Link again')

  const filtered = await call('GET', `/events?type=person.updated,person.deleted&cursor=${cursorOf(start)}`, admin)
  t.same(filtered.body.map((e: Event) => e.subject), [`/person/${people[2].id}`])
  const bySubject = await call('GET', `/events?subject=/person/${people[2].id}&cursor=${cursorOf(start)}`, admin)
  t.same(bySubject.body.map((e: Event) => e.type), ['person.created', 'person.updated'])
  t.same((await call('GET', nextOf(filtered), admin)).body, [], 'a filtered page\'s cursor moves past what it read')

  for (const query of ['limit=0', 'limit=1001', 'wait=31', 'wait=-1', 'type=person.renamed', 'cursor=nonsense', 'subject=', 'colour=blue']) {
    const answer = await call('GET', `/events?${query}`, admin)
    t.equal(answer.status, 400, query)
    t.ok(typeof answer.body.message === 'string' && answer.body.message.length > 0, `${query}: says why`)
  }
  const metrics = await fetch(`${url}/metrics`, { headers: admin })
  const text = await metrics.text()
  const figure = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1])
  t.equal(figure('events_retained'), figure('events_last_position'), '/metrics: every event is kept (none pruned)')
  t.ok(figure('events_last_position') >= 6, '/metrics: the last position')
  t.ok(figure('events_oldest_age_seconds') >= 0 && figure('events_oldest_age_seconds') < 60, '/metrics: the oldest event\'s age')
  t.equal((await call('GET', '/events')).status, 401, 'no credentials')
  t.equal((await call('GET', '/events', key)).status, 403, 'no admin scope')
})

t.test('GET /events: a key with admin but not people:read learns what changed, not what it holds', async (t) => {
  const { app, call, admin, key, newEvents } = await setup(t)
  await newEvents()
  const auditor = { 'x-api-key': (await apiKeyOf(app, admin, { name: 'auditor', scopes: ['admin'] }))['x-api-key'] }
  const cursor = nextOf(await call('GET', '/events?limit=1000', admin))
  const ada = (await call('POST', '/person', key, { name: 'Ada Secretname', email: 'ada@example.org' })).body
  await call('POST', '/message', key, { personId: ada.id, text: 'private words' })
  const seen = await call('GET', cursor, auditor)
  t.same(seen.body.map((e: Event) => [e.type, e.data]), [['person.created', { id: ada.id }], ['message.sent', { id: seen.body[1].data.id }]])
  t.notMatch(JSON.stringify(seen.body), /Secretname|private words|example\.org/)
})

t.test('GET /events?wait=: answers when something comes, or with [] when the wait ends; waits are bounded per caller', async (t) => {
  const { call, admin, key, newEvents, url } = await setup(t)
  await newEvents()
  const tail = nextOf(await call('GET', '/events?limit=1000', admin))
  const started = Date.now()
  const waiting = call('GET', `${tail}&wait=10`, admin)
  await new Promise((resolve) => setTimeout(resolve, 300))
  const ada = (await call('POST', '/person', key, { name: 'Ada' })).body
  const answer = await waiting
  const took = Date.now() - started
  t.same(answer.body.map((e: Event) => e.subject), [`/person/${ada.id}`], 'the event that came')
  t.ok(took >= 300 && took < 3000, `answered as it came (${took} ms)`)

  t.match(nextOf(answer), /wait=10/, 'the Link keeps the wait: a consumer follows it and waits again')
  const after = `/events?cursor=${new URL(nextOf(answer), url).searchParams.get('cursor')!}`
  const quiet = Date.now()
  const empty = await call('GET', `${after}&wait=1`, admin)
  t.same(empty.body, [])
  t.ok(Date.now() - quiet >= 1000, 'an empty answer once the wait ended')
  t.equal(nextOf(empty), `${after}&wait=1`, 'and the same place to go on from')

  // Two waits per caller here (eventWaits.perCaller): a third is refused, another caller is not.
  const two = [call('GET', `${after}&wait=2`, admin), call('GET', `${after}&wait=2`, admin)]
  await new Promise((resolve) => setTimeout(resolve, 200))
  const third = await call('GET', `${after}&wait=2`, admin)
  t.equal(third.status, 429)
  t.equal(third.body.code, 'TOO_MANY_WAITS')
  t.ok(Number(third.headers.get('retry-after')) > 0, 'with Retry-After')
  t.equal((await call('GET', `${after}&wait=0`, admin)).status, 200, 'not waiting is always allowed')
  for (const answer of await Promise.all(two)) t.equal(answer.status, 200)
  t.equal((await call('GET', `${after}&wait=1`, admin)).status, 200, 'places are given back')
})

t.test('GET /events: a cursor older than what was pruned is 410 EVENTS_EXPIRED', async (t) => {
  const { call, admin, key, database, newEvents } = await setup(t)
  await newEvents()
  const old = nextOf(await call('GET', '/events?limit=1000', admin))
  for (const name of ['A', 'B']) await call('POST', '/person', key, { name })
  const feed = createRepositories(database).changeFeed
  t.ok(await feed.pruneBefore(new Date(Date.now() + 60_000), 1000) > 0, 'pruned')
  const gone = await call('GET', old, admin)
  t.equal(gone.status, 410)
  t.equal(gone.body.code, 'EVENTS_EXPIRED')
  const fresh = await call('GET', '/events', admin)
  t.equal(fresh.status, 200, 'starting again without a cursor works')
  t.same(fresh.body, [])
  await call('POST', '/person', key, { name: 'C' })
  t.same((await call('GET', nextOf(fresh), admin)).body.map((e: Event) => e.data.name), ['C'], 'and goes on from there')
})

t.test('an update that changes nothing keeps the version, ETag and updatedAt, and records no event', async (t) => {
  const { call, key, newEvents } = await setup(t)
  const ada = (await call('POST', '/person', key, { name: 'Ada', age: 36, address: { city: 'London' } })).body
  await call('PATCH', `/person/${ada.id}`, key, { age: 37 })
  const before = await call('GET', `/person/${ada.id}`, key)
  await newEvents()
  for (const [method, body] of [['PUT', {}], ['PATCH', { age: 37 }], ['POST', { name: 'Ada', address: { city: 'London' } }], ['PUT', { address: { country: null } }]] as const) {
    const answer = await call(method, `/person/${ada.id}`, key, body)
    t.equal(answer.status, 200, `${method} ${JSON.stringify(body)}`)
    t.equal(answer.headers.get('etag'), before.headers.get('etag'), `${method} ${JSON.stringify(body)}: the same ETag`)
    t.same(answer.body, before.body, 'the same person, updatedAt included')
  }
  t.same(await newEvents(), [], 'no event')
  const changed = await call('PUT', `/person/${ada.id}`, key, { address: { country: 'UK' } })
  t.not(changed.headers.get('etag'), before.headers.get('etag'), 'a real change moves the ETag')
  t.equal((await newEvents()).length, 1)
})
