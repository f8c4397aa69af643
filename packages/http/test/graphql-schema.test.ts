import t from 'tap'
import { ADA, build, callerIdOf, getGraphQL, gqlData, graphql, postGraphQL } from './helper.js'

interface Created { createPerson: { id: string } }

const PERSON_FIELDS = 'id name age email address { street city country }'

t.test('createPerson stores a person and answers only the fields asked for', async (t) => {
  const { api } = await build(t)
  const { status, body } = await graphql(api, postGraphQL(`mutation ($input: PersonInput!) { createPerson(input: $input) { ${PERSON_FIELDS} } }`, { input: ADA }))
  t.equal(status, 200)
  const created = (body.data as { createPerson: { id: string } }).createPerson
  t.same(body, { data: { createPerson: { id: created.id, ...ADA } } })
  const bare = await gqlData<{ createPerson: Record<string, unknown> }>(api, 'mutation { createPerson(input: { name: "Bob" }) { name age email address { city } } }')
  t.same(bare.createPerson, { name: 'Bob', age: null, email: null, address: null })
  const rest = await api.inject({ method: 'GET', url: `/person/${created.id}` })
  t.match(rest.json(), { id: created.id, ...ADA }, 'REST sees the same person')
})

t.test('person(id) answers every field, and null for an unknown or malformed id', async (t) => {
  const { api } = await build(t)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation ($input: PersonInput!) { createPerson(input: $input) { id } }', { input: ADA })
  const { body } = await graphql(api, getGraphQL(`query ($id: ID!) { person(id: $id) { ${PERSON_FIELDS} friends { id } messages { id } } }`, { id: ada.id }))
  t.same(body, { data: { person: { id: ada.id, ...ADA, friends: [], messages: [] } } })
  for (const id of ['01900000-0000-7000-8000-000000000000', 'not-an-id']) {
    const missing = await graphql(api, getGraphQL('query ($id: ID!) { person(id: $id) { name } }', { id }))
    t.equal(missing.status, 200)
    t.same(missing.body, { data: { person: null } }, `${id}: null, not an error`)
  }
})

t.test('people lists in id order, with limit, cursor and name filter', async (t) => {
  const { api } = await build(t)
  const names = ['Ada', 'Bob', 'Cyd', 'Dee']
  for (const name of names) await gqlData(api, 'mutation ($name: String!) { createPerson(input: { name: $name }) { id } }', { name })
  const all = await gqlData<{ people: Array<{ name: string }> }>(api, '{ people { name } }')
  t.same(all.people.map((p) => p.name), names)
  const two = await gqlData<{ people: Array<{ name: string }> }>(api, '{ people(limit: 2) { name } }')
  t.same(two.people.map((p) => p.name), ['Ada', 'Bob'])
  const page = await api.inject({ method: 'GET', url: '/people?limit=2' })
  const cursor = new URLSearchParams(/<([^>]+)>/.exec(String(page.headers.link))?.[1]?.split('?')[1]).get('cursor')
  const next = await gqlData<{ people: Array<{ name: string }> }>(api, 'query ($c: String) { people(limit: 2, cursor: $c) { name } }', { c: cursor })
  t.same(next.people.map((p) => p.name), ['Cyd', 'Dee'], 'a cursor from the REST Link header pages on')
  const named = await gqlData<{ people: Array<{ name: string }> }>(api, '{ people(name: "d") { name } }')
  t.same(named.people.map((p) => p.name), ['Ada', 'Cyd', 'Dee'])
  const full = await gqlData<{ people: Array<{ age: number | null, email: string | null, address: unknown }> }>(api, '{ people(limit: 1) { age email address { city } } }')
  t.same(full.people, [{ age: null, email: null, address: null }], 'list entries resolve every person field')
})

t.test('updatePerson keeps what is left out, clears what is null', async (t) => {
  const { api } = await build(t)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation ($input: PersonInput!) { createPerson(input: $input) { id } }', { input: ADA })
  const moved = await gqlData(api, `mutation ($id: ID!) { updatePerson(id: $id, input: { email: null, address: { city: "Paris" } }) { ${PERSON_FIELDS} } }`, { id: ada.id })
  t.same(moved, { updatePerson: { id: ada.id, ...ADA, email: null, address: { ...ADA.address, city: 'Paris' } } })
})

t.test('deletePerson answers the id and the person is gone', async (t) => {
  const { api } = await build(t)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  t.same(await gqlData(api, 'mutation ($id: ID!) { deletePerson(id: $id) }', { id: ada.id }), { deletePerson: ada.id })
  t.same(await gqlData(api, 'query ($id: ID!) { person(id: $id) { id } }', { id: ada.id }), { person: null })
})

t.test('addFriend and removeFriend answer the person, friendship is mutual', async (t) => {
  const { api } = await build(t)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const { createPerson: bob } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Bob", age: 40 }) { id } }')
  const added = await gqlData(api, 'mutation ($a: ID!, $b: ID!) { addFriend(personId: $a, friendId: $b) { name friends { id name age } } }', { a: ada.id, b: bob.id })
  t.same(added, { addFriend: { name: 'Ada', friends: [{ id: bob.id, name: 'Bob', age: 40 }] } })
  const other = await gqlData(api, 'query ($b: ID!) { person(id: $b) { friends(limit: 1) { name } none: friends(limit: 0) { name } } }', { b: bob.id })
  t.same(other, { person: { friends: [{ name: 'Ada' }], none: [] } })
  const removed = await gqlData(api, 'mutation ($a: ID!, $b: ID!) { removeFriend(personId: $b, friendId: $a) { name friends { name } } }', { a: ada.id, b: bob.id })
  t.same(removed, { removeFriend: { name: 'Bob', friends: [] } })
})

t.test('sendMessage stores a message; message(id), Person.messages and Message.person read it back', async (t) => {
  const { app, api, admin } = await build(t)
  const senderId = await callerIdOf(app, admin)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const sent = await gqlData<{ sendMessage: { id: string, sentAt: string } }>(api, 'mutation ($p: ID!) { sendMessage(personId: $p, text: "Hello, Ada") { id text senderId sentAt person { id name } } }', { p: ada.id })
  t.match(sent.sendMessage, { text: 'Hello, Ada', senderId, person: { id: ada.id, name: 'Ada' } })
  t.equal(new Date(sent.sendMessage.sentAt).toISOString(), sent.sendMessage.sentAt, 'sentAt is an ISO-8601 instant')
  const read = await gqlData(api, 'query ($id: ID!) { message(id: $id) { id text senderId sentAt person { name } } }', { id: sent.sendMessage.id })
  t.same(read, { message: { id: sent.sendMessage.id, text: 'Hello, Ada', senderId, sentAt: sent.sendMessage.sentAt, person: { name: 'Ada' } } })
  await gqlData(api, 'mutation ($p: ID!) { sendMessage(personId: $p, text: "second") { id } }', { p: ada.id })
  const inbox = await gqlData(api, 'query ($p: ID!) { person(id: $p) { messages { text } latest: messages(limit: 1) { text } } }', { p: ada.id })
  t.same(inbox, { person: { messages: [{ text: 'second' }, { text: 'Hello, Ada' }], latest: [{ text: 'second' }] } }, 'newest first')
  t.same(await gqlData(api, '{ message(id: "01900000-0000-7000-8000-000000000000") { id } }'), { message: null }, 'unknown message: null')
})

t.test('GraphiQL is served outside production', async (t) => {
  const { api } = await build(t)
  const page = await api.inject({ method: 'GET', url: '/graphiql' })
  t.equal(page.statusCode, 200)
  t.match(page.headers['content-type'], /text\/html/)
})

t.test('a query compiled by graphql-jit answers as the interpreted one did, errors included', async (t) => {
  const { api } = await build(t, { graphqlJit: 1 })
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Ada", age: 36 }) { id } }')
  const read = 'query ($id: ID!) { person(id: $id) { name age friends { name } } }'
  const answers = []
  for (let run = 0; run < 3; run++) answers.push((await graphql(api, getGraphQL(read, { id: ada.id }))).body)
  t.same(answers, Array(3).fill({ data: { person: { name: 'Ada', age: 36, friends: [] } } }))
  const failing = 'mutation ($id: ID!) { deletePerson(id: $id) }'
  for (let run = 0; run < 3; run++) {
    const { status, body } = await graphql(api, postGraphQL(failing, { id: '01900000-0000-7000-8000-000000000000' }))
    t.equal(status, 200)
    t.match(body, { data: null, errors: [{ path: ['deletePerson'], extensions: { code: 'PERSON_NOT_FOUND' } }] }, `run ${run + 1}`)
  }
})
