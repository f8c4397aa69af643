import t from 'tap'
import { createRepositories } from '@people-service/infra'
import { build, getGraphQL, gqlData, graphql, portsOver, postGraphQL, sqliteDatabase } from './helper.js'

/*
 * Hostile GraphQL input is refused before anything runs: arguments outside
 * the REST limit of the same field, documents too large, subscriptions sent
 * to the HTTP door. "Before anything runs" is checked on a real SQLite file:
 * a refused request sends no statement about people, friendships or messages.
 */

const codesOf = (body: { errors?: Array<{ extensions?: Record<string, unknown> }> }) =>
  (body.errors ?? []).map((e) => e.extensions?.code)

const DATA = /\b(person|friendship|message)\b/

const overSqlite = async (t: Parameters<typeof sqliteDatabase>[0]) => {
  const database = await sqliteDatabase(t)
  const built = await build(t, { ports: portsOver(createRepositories(database)) })
  return { ...built, statements: database.statements }
}

t.test('every argument outside the REST limit of its field is 400 naming it, before any database work', async (t) => {
  const { api, statements } = await overSqlite(t)
  const { createPerson: ada } = await gqlData<{ createPerson: { id: string } }>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const cases: Array<[string, Record<string, unknown>, RegExp, string]> = [
    // The finding: a 120 KB name held the event loop for 15 s.
    ['query ($name: String) { people(name: $name) { id } }', { name: 'x'.repeat(120_000) }, /^people\(name:\) must be 1 to 200 characters$/, 'people.name'],
    [`{ people(name: "${'y'.repeat(201)}") { id } }`, {}, /^people\(name:\) must be 1 to 200 characters$/, 'people.name'],
    ['{ people(name: "") { id } }', {}, /^people\(name:\) must be 1 to 200 characters$/, 'people.name'],
    [`{ people(cursor: "${'c'.repeat(513)}") { id } }`, {}, /^people\(cursor:\) must be 1 to 512 characters$/, 'people.cursor'],
    ['{ peopleConnection(first: 0) { pageInfo { hasNextPage } } }', {}, /^peopleConnection\(first:\) must be an integer from 1 to 1000, not 0$/, 'peopleConnection.first'],
    ['query ($n: Int) { peopleConnection(first: $n) { pageInfo { hasNextPage } } }', { n: 1001 }, /^peopleConnection\(first:\) .* not 1001$/, 'peopleConnection.first'],
    ['query ($name: String) { peopleConnection(name: $name) { pageInfo { hasNextPage } } }', { name: 'n'.repeat(201) }, /^peopleConnection\(name:\)/, 'peopleConnection.name'],
    ['query ($after: String) { peopleConnection(after: $after) { pageInfo { hasNextPage } } }', { after: 'a'.repeat(513) }, /^peopleConnection\(after:\)/, 'peopleConnection.after'],
    ['{ people { messages(limit: 0) { id } } }', {}, /^messages\(limit:\) must be an integer from 1 to 100, not 0$/, 'messages.limit'],
    ['mutation ($input: PersonInput!) { createPerson(input: $input) { id } }', { input: { name: 'z'.repeat(201) } }, /^createPerson\(input:\) name must be 1 to 200 characters$/, 'createPerson.input.name'],
    ['mutation { createPerson(input: { name: "" }) { id } }', {}, /^createPerson\(input:\) name must be 1 to 200/, 'createPerson.input.name'],
    ['mutation ($input: PersonInput!) { createPerson(input: $input) { id } }', { input: { name: 'Eve', email: 'not an address' } }, /^createPerson\(input:\) email must be an e-mail address/, 'createPerson.input.email'],
    ['mutation ($id: ID!) { updatePerson(id: $id, input: { age: 151 }) { id } }', { id: ada.id }, /^updatePerson\(input:\) age must be an integer from 0 to 150/, 'updatePerson.input.age'],
    ['mutation ($id: ID!) { updatePerson(id: $id, input: { name: null }) { id } }', { id: ada.id }, /^updatePerson\(input:\) name cannot be cleared$/, 'updatePerson.input.name'],
    ['mutation ($id: ID!) { updatePerson(id: $id, input: { address: { city: "' + 'c'.repeat(201) + '" } }) { id } }', { id: ada.id }, /^updatePerson\(input:\) address\.city must be a string of at most 200/, 'updatePerson.input.address.city'],
    ['mutation ($id: ID!, $text: String!) { sendMessage(personId: $id, text: $text) { id } }', { id: ada.id, text: 'm'.repeat(10_001) }, /^sendMessage\(text:\) text must be 1 to 10000 characters$/, 'sendMessage.text'],
    ['mutation ($id: ID!) { sendMessage(personId: $id, text: "") { id } }', { id: ada.id }, /^sendMessage\(text:\) text must be 1 to 10000/, 'sendMessage.text']
  ]
  for (const [query, variables, message, field] of cases) {
    statements.length = 0
    const { status, body } = await graphql(api, postGraphQL(query, variables))
    t.equal(status, 400, `${field}: refused as a request`)
    t.match(body.errors?.[0], { message, extensions: { code: 'VALIDATION_FAILED', field } }, field)
    t.notOk('data' in body, 'nothing ran')
    t.same(statements.filter((s) => DATA.test(s)), [], `${field}: no statement reached the data`)
  }
  const sameOverGet = await graphql(api, getGraphQL('query ($name: String) { people(name: $name) { id } }', { name: 'g'.repeat(201) }))
  t.equal(sameOverGet.status, 400, 'GET is held to the same limits')
  t.same(await gqlData(api, '{ people(name: "' + 'y'.repeat(200) + '") { id } }'), { people: [] }, '200 characters are allowed')
})

t.test('a document whose second mutation has a bad input runs neither', async (t) => {
  const { api } = await build(t)
  const { status, body } = await graphql(api, postGraphQL('mutation { a: createPerson(input: { name: "Ann" }) { id } b: createPerson(input: { name: "" }) { id } }'))
  t.equal(status, 400)
  t.same(codesOf(body), ['VALIDATION_FAILED'])
  t.same(await gqlData(api, '{ people { name } }'), { people: [] }, 'Ann was not created')
})

t.test('literal arguments are checked once per document; arguments from variables on every request', async (t) => {
  const { api } = await build(t)
  const literal = '{ people(limit: 5, name: "ok") { id friends(limit: 3) { id } } }'
  for (let i = 0; i < 3; i++) t.equal((await graphql(api, getGraphQL(literal))).status, 200, `run ${i + 1}`)
  const byVariable = 'query ($name: String) { people(name: $name) { id } }'
  t.equal((await graphql(api, getGraphQL(byVariable, { name: 'ok' }))).status, 200)
  t.equal((await graphql(api, getGraphQL(byVariable, { name: 'x'.repeat(201) }))).status, 400, 'the same document with a bad value')
  t.equal((await graphql(api, getGraphQL(byVariable, { name: null }))).status, 200, 'null: no filter')
  const bad = '{ people(name: "") { id } }'
  for (let i = 0; i < 2; i++) t.equal((await graphql(api, getGraphQL(bad))).status, 400, `a refused document stays refused (${i + 1})`)
})

t.test('a document over 32,768 characters is refused before it is parsed; a 10,000-character text fits', async (t) => {
  const { api } = await build(t)
  const huge = `{ people { id } } # ${'#'.repeat(40_000)}`
  const { status, body } = await graphql(api, postGraphQL(huge))
  t.equal(status, 400)
  t.same(body, { errors: [{ message: `the document is ${huge.length} characters long; at most 32768 are allowed: pass long values as variables`, extensions: { code: 'DOCUMENT_TOO_LARGE' } }] })
  const { createPerson: ada } = await gqlData<{ createPerson: { id: string } }>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const longest = await gqlData<{ sendMessage: { text: string } }>(api, `mutation { sendMessage(personId: "${ada.id}", text: "${'t'.repeat(10_000)}") { text } }`)
  t.equal(longest.sendMessage.text.length, 10_000)
})

t.test('a subscription over HTTP is 400 (POST) or 405 (GET), saying where subscriptions are served', async (t) => {
  const { api } = await build(t)
  const subscription = 'subscription { messageSent { id text } }'
  const message = 'subscriptions are served over WebSocket at /graphql (graphql-ws protocol), not over HTTP'
  const post = await graphql(api, postGraphQL(subscription))
  t.equal(post.status, 400)
  t.same(post.body, { errors: [{ message, extensions: { code: 'SUBSCRIPTION_OVER_HTTP' } }] })
  const get = await graphql(api, getGraphQL(subscription))
  t.equal(get.status, 405)
  t.same(get.body, { errors: [{ message, extensions: { code: 'METHOD_NOT_ALLOWED' } }] })
  t.equal(get.response.headers.allow, 'GET, HEAD, POST')
  const named = await graphql(api, postGraphQL('query Q { __typename } subscription S { messageSent { id } }', undefined, 'S'))
  t.equal(named.status, 400, 'the operation that would run decides')
  t.same((await graphql(api, postGraphQL('query Q { __typename } subscription S { messageSent { id } }', undefined, 'Q'))).body, { data: { __typename: 'Query' } })
})

t.test('the queries that held the server within the former budget are refused by the default one', async (t) => {
  const { api } = await build(t)
  const refusal = async (query: string) => {
    const { status, body } = await graphql(api, postGraphQL(query))
    return { status, code: body.errors?.[0]?.extensions?.code, cost: body.errors?.[0]?.extensions?.cost }
  }
  // About 0.5 s on the bench data set, admitted at a cost of 44,400.
  t.same(await refusal('{ people(limit: 400) { friends(limit: 10) { friends(limit: 10) { id } } } }'), { status: 400, code: 'QUERY_TOO_COSTLY', cost: 44_400 })
  // Sixteen scans of every name cost 16,000 when only list items counted; each is 2,000 + 1,000 now.
  const scans = Array.from({ length: 16 }, (_, i) => `s${i}: people(limit: 1000, name: "q${i}") { id }`).join(' ')
  t.same(await refusal(`{ ${scans} }`), { status: 400, code: 'QUERY_TOO_COSTLY', cost: 48_000 })
})
