import t from 'tap'
import type { IdGenerator } from '@people-service/domain'
import { createInMemoryPorts, fastPasswordHasher } from '@people-service/domain/testing'
import type { InjectOptions } from 'fastify'
import { build, graphql, postGraphQL, type Injector } from './helper.js'

/*
 * REST and GraphQL serve the same use cases, so the same operation must give
 * the same data, and the same failure the same code. Each row runs once
 * through each API, on two apps seeded identically (same ids, same clock).
 */

const idAt = (n: number): string => `00000000-0000-7000-8000-${n.toString(16).padStart(12, '0')}`
/**
 * Predictable ids: from `arm()` on, idAt(1), idAt(2)…; before it (the test
 * admin's account, the caller of every request) a range of their own, so
 * both apps have the same caller and messages the same senderId.
 */
const counting = (): IdGenerator & { arm(): void } => {
  let before = 0
  let n: number | undefined
  return { next: () => (n === undefined ? idAt(0x100000 + ++before) : idAt(++n)), arm: () => { n = 0 } }
}
const clock = { now: () => new Date('2026-11-21T10:00:00.000Z') }
// Each change's event takes the id after it: Ada, her event, Bob, his, Cyd,
// hers, the friendship's event, the message.
const [ADA, BOB, CYD] = [idAt(1), idAt(3), idAt(5)]
const MESSAGE = idAt(8)
const UNKNOWN = idAt(999)

const seededApp = async (t: Parameters<typeof build>[0]): Promise<Injector> => {
  const ids = counting()
  const { api } = await build(t, { ports: createInMemoryPorts({ ids, clock, passwords: fastPasswordHasher() }) })
  ids.arm()
  const post = async (url: string, payload: object) => {
    const response = await api.inject({ method: 'POST', url, payload })
    if (response.statusCode !== 201) throw new Error(`seeding failed: ${response.body}`)
  }
  await post('/person', { name: 'Ada', age: 36, email: 'ada@example.org', address: { street: null, city: 'London', country: 'UK' } })
  await post('/person', { name: 'Bob' })
  await post('/person', { name: 'Cyd', age: 25 })
  await api.inject({ method: 'PUT', url: `/person/${ADA}/friends/${BOB}` })
  await post('/message', { personId: ADA, text: 'Hello, Ada' })
  return api
}

interface Row {
  name: string
  rest: InjectOptions
  graphql: { query: string, variables?: Record<string, unknown> }
  /** The part of each answer that must agree; absent: compare the error codes only. */
  fromRest?: (body: unknown) => unknown
  fromGraphQL?: (data: Record<string, unknown>) => unknown
}

const person = (fields: Record<string, unknown>) => {
  const { id, name, age, email, address } = fields
  return { id, name, age, email, address }
}
const PERSON = 'id name age email address { street city country }'
const MESSAGE_FIELDS = 'id personId: person { id } text senderId sentAt'
const message = (m: Record<string, unknown>) => ({ id: m.id, personId: typeof m.personId === 'object' ? (m.personId as { id: string }).id : m.personId, text: m.text, senderId: m.senderId, sentAt: m.sentAt })
const same = (key: string, shape: (value: Record<string, unknown>) => unknown = (v) => v) => ({
  fromRest: (body: unknown) => Array.isArray(body) ? body.map((v) => shape(v as Record<string, unknown>)) : shape(body as Record<string, unknown>),
  fromGraphQL: (data: Record<string, unknown>) => {
    const value = data[key]
    return Array.isArray(value) ? value.map((v) => shape(v as Record<string, unknown>)) : shape(value as Record<string, unknown>)
  }
})

const rows: Row[] = [
  { name: 'get a person', rest: { method: 'GET', url: `/person/${ADA}` }, graphql: { query: `{ person(id: "${ADA}") { ${PERSON} } }` }, ...same('person', person) },
  { name: 'list people', rest: { method: 'GET', url: '/people?limit=2' }, graphql: { query: '{ people(limit: 2) { id name } }' }, ...same('people') },
  { name: 'filter people by name', rest: { method: 'GET', url: '/people?name=y' }, graphql: { query: '{ people(name: "y") { id name } }' }, ...same('people') },
  { name: 'list friends', rest: { method: 'GET', url: `/person/${ADA}/friends?limit=5` }, graphql: { query: `{ person(id: "${ADA}") { friends(limit: 5) { id name } } }` }, fromRest: (b) => b, fromGraphQL: (d) => (d.person as { friends: unknown }).friends },
  { name: 'list messages', rest: { method: 'GET', url: `/person/${ADA}/messages` }, graphql: { query: `{ person(id: "${ADA}") { messages { ${MESSAGE_FIELDS} } } }` }, fromRest: (b) => (b as Array<Record<string, unknown>>).map(message), fromGraphQL: (d) => ((d.person as { messages: Array<Record<string, unknown>> }).messages).map(message) },
  { name: 'get a message', rest: { method: 'GET', url: `/message/${MESSAGE}` }, graphql: { query: `{ message(id: "${MESSAGE}") { ${MESSAGE_FIELDS} } }` }, ...same('message', message) },
  { name: 'create a person', rest: { method: 'POST', url: '/person', payload: { name: 'Dee', age: 50 } }, graphql: { query: `mutation { createPerson(input: { name: "Dee", age: 50 }) { ${PERSON} } }` }, ...same('createPerson', person) },
  { name: 'create with an internationalised e-mail', rest: { method: 'POST', url: '/person', payload: { name: 'Zoë', email: 'zoë@bücher.de' } }, graphql: { query: `mutation { createPerson(input: { name: "Zoë", email: "zoë@bücher.de" }) { ${PERSON} } }` }, ...same('createPerson', person) },
  { name: 'update a person', rest: { method: 'PATCH', url: `/person/${ADA}`, payload: { email: null, address: { city: 'Paris' } } }, graphql: { query: `mutation { updatePerson(id: "${ADA}", input: { email: null, address: { city: "Paris" } }) { ${PERSON} } }` }, ...same('updatePerson', person) },
  { name: 'delete a person', rest: { method: 'DELETE', url: `/person/${BOB}` }, graphql: { query: `mutation { deletePerson(id: "${BOB}") }` }, fromRest: (b) => (b as { id: string }).id, fromGraphQL: (d) => d.deletePerson },
  { name: 'befriend', rest: { method: 'PUT', url: `/person/${CYD}/friends/${ADA}` }, graphql: { query: `mutation { addFriend(personId: "${CYD}", friendId: "${ADA}") { id } }` }, fromRest: (b) => (b as { personId: string }).personId, fromGraphQL: (d) => (d.addFriend as { id: string }).id },
  { name: 'unfriend', rest: { method: 'DELETE', url: `/person/${BOB}/friends/${ADA}` }, graphql: { query: `mutation { removeFriend(personId: "${BOB}", friendId: "${ADA}") { id } }` }, fromRest: (b) => (b as { personId: string }).personId, fromGraphQL: (d) => (d.removeFriend as { id: string }).id },
  { name: 'send a message', rest: { method: 'POST', url: '/message', payload: { personId: CYD, text: 'Hi Cyd' } }, graphql: { query: `mutation { sendMessage(personId: "${CYD}", text: "Hi Cyd") { ${MESSAGE_FIELDS} } }` }, ...same('sendMessage', message) },
  { name: 'update someone unknown', rest: { method: 'PATCH', url: `/person/${UNKNOWN}`, payload: { name: 'X' } }, graphql: { query: `mutation { updatePerson(id: "${UNKNOWN}", input: { name: "X" }) { id } }` } },
  { name: 'update someone unknown with a bad age', rest: { method: 'PATCH', url: `/person/${UNKNOWN}`, payload: { age: 151 } }, graphql: { query: `mutation { updatePerson(id: "${UNKNOWN}", input: { age: 151 }) { id } }` } },
  { name: 'delete someone unknown', rest: { method: 'DELETE', url: `/person/${UNKNOWN}` }, graphql: { query: `mutation { deletePerson(id: "${UNKNOWN}") }` } },
  { name: 'befriend oneself', rest: { method: 'PUT', url: `/person/${ADA}/friends/${ADA}` }, graphql: { query: `mutation { addFriend(personId: "${ADA}", friendId: "${ADA}") { id } }` } },
  { name: 'befriend someone unknown', rest: { method: 'PUT', url: `/person/${ADA}/friends/${UNKNOWN}` }, graphql: { query: `mutation { addFriend(personId: "${ADA}", friendId: "${UNKNOWN}") { id } }` } },
  { name: 'message someone unknown', rest: { method: 'POST', url: '/message', payload: { personId: UNKNOWN, text: 'hi' } }, graphql: { query: `mutation { sendMessage(personId: "${UNKNOWN}", text: "hi") { id } }` } },
  { name: 'send an empty message', rest: { method: 'POST', url: '/message', payload: { personId: ADA, text: '' } }, graphql: { query: `mutation { sendMessage(personId: "${ADA}", text: "") { id } }` } },
  { name: 'create with an age out of range', rest: { method: 'POST', url: '/person', payload: { name: 'Old', age: 151 } }, graphql: { query: 'mutation { createPerson(input: { name: "Old", age: 151 }) { id } }' } },
  { name: 'create with a bad e-mail', rest: { method: 'POST', url: '/person', payload: { name: 'E', email: 'nope' } }, graphql: { query: 'mutation { createPerson(input: { name: "E", email: "nope" }) { id } }' } },
  { name: 'list no people', rest: { method: 'GET', url: '/people?limit=0' }, graphql: { query: '{ people(limit: 0) { id } }' } },
  { name: 'list too many people', rest: { method: 'GET', url: '/people?limit=1001' }, graphql: { query: '{ people(limit: 1001) { id } }' } },
  { name: 'list too many friends', rest: { method: 'GET', url: `/person/${ADA}/friends?limit=101` }, graphql: { query: `{ person(id: "${ADA}") { friends(limit: 101) { id } } }` } },
  { name: 'page with a forged cursor', rest: { method: 'GET', url: '/people?cursor=forged' }, graphql: { query: '{ people(cursor: "forged") { id } }' } }
]

for (const row of rows) {
  t.test(row.name, async (t) => {
    const restApp = await seededApp(t)
    const graphqlApp = await seededApp(t)
    const rest = await restApp.inject(row.rest)
    const gql = await graphql(graphqlApp, postGraphQL(row.graphql.query, row.graphql.variables))
    const restBody: unknown = rest.json()
    const restCode = rest.statusCode >= 400 ? (restBody as { code?: string }).code : undefined
    const graphqlCode = gql.body.errors?.[0]?.extensions?.code
    t.equal(graphqlCode, restCode, `error code: REST ${rest.statusCode} ${String(restCode)}`)
    if (row.fromRest && row.fromGraphQL) {
      t.ok(rest.statusCode < 300, `REST succeeded: ${rest.body}`)
      t.same(row.fromGraphQL(gql.body.data ?? {}), row.fromRest(restBody), 'same data')
    }
  })
}
