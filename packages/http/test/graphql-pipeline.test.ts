import t from 'tap'
import { apiKeyOf, build, clientOf, getGraphQL, gqlData, graphql, loginAs, postGraphQL } from './helper.js'

/*
 * The pipeline works out what depends on the document alone once, and what
 * depends on the caller once per set of scopes (pipeline.ts). These tests
 * hold it to its keys: a result worked out for one document, operation name
 * or set of scopes is never used for another.
 */

const codesOf = (body: { errors?: Array<{ extensions?: Record<string, unknown> }> }) =>
  (body.errors ?? []).map((e) => e.extensions?.code)

t.test('another document is checked and run on its own, even with the same operation name and caller', async (t) => {
  const { app, api } = await build(t, { graphqlMaxCost: 1000 })
  const viewer = clientOf(app, await loginAs(app, 'viewer'))
  const read = 'query Op { people(limit: 5) { name } }'
  for (let i = 0; i < 3; i++) t.same((await graphql(viewer, postGraphQL(read))).body, { data: { people: [] } }, `the first document, run ${i + 1}`)

  const write = 'mutation Op { createPerson(input: { name: "Eve" }) { id } }'
  const refused = await graphql(viewer, postGraphQL(write))
  t.equal(refused.status, 403, 'another document, same name, same caller: checked on its own')
  t.same(codesOf(refused.body), ['FORBIDDEN'])
  t.same(await gqlData(api, '{ people { name } }'), { people: [] }, 'and it did not run')

  const costly = 'query Op { people(limit: 100) { friends(limit: 10) { name } } }'
  const tooCostly = await graphql(viewer, postGraphQL(costly))
  t.equal(tooCostly.status, 400, 'another document has its own cost')
  t.same(codesOf(tooCostly.body), ['QUERY_TOO_COSTLY'])

  const { createPerson: ada } = await gqlData<{ createPerson: { id: string } }>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  t.same((await graphql(viewer, postGraphQL(read))).body, { data: { people: [{ name: 'Ada' }] } })
  t.same((await graphql(viewer, postGraphQL('query Op { people(limit: 5) { id } }'))).body, { data: { people: [{ id: ada.id }] } }, 'each document answers its own selection')
})

t.test('another operation of the same document is checked and run on its own', async (t) => {
  const { app, api } = await build(t, { graphqlJit: 1 })
  const viewer = clientOf(app, await loginAs(app, 'viewer'))
  const document = 'query Read { people(limit: 5) { name } } mutation Write { createPerson(input: { name: "Eve" }) { id } } query Ids { people(limit: 5) { id } }'
  await gqlData(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  // Twice: the second run is compiled by graphql-jit.
  for (let i = 0; i < 2; i++) t.same((await graphql(viewer, postGraphQL(document, undefined, 'Read'))).body, { data: { people: [{ name: 'Ada' }] } })

  const write = await graphql(viewer, postGraphQL(document, undefined, 'Write'))
  t.equal(write.status, 403, 'the mutation of a document whose query passed is checked for itself')
  t.same(codesOf(write.body), ['FORBIDDEN'])
  t.same(await gqlData(api, '{ people { name } }'), { people: [{ name: 'Ada' }] }, 'Eve was not created')
  t.equal((await graphql(viewer, getGraphQL(document, undefined, 'Write'))).status, 405, 'over GET the mutation is refused as a mutation')

  const { people } = await gqlData<{ people: Array<{ id: string }> }>(api, '{ people { id } }')
  for (let i = 0; i < 2; i++) {
    t.same((await graphql(viewer, getGraphQL(document, undefined, 'Ids'))).body, { data: { people } }, `Ids runs its own selection, not the one compiled for Read (run ${i + 1})`)
  }
  const editor = clientOf(app, await loginAs(app, 'editor'))
  t.match((await graphql(editor, postGraphQL(document, undefined, 'Write'))).body, { data: { createPerson: { id: String } } }, 'a caller who may run Write does')
})

t.test('another set of scopes is authorized on its own, in either order', async (t) => {
  const { app, api } = await build(t)
  const editor = clientOf(app, await loginAs(app, 'editor'))
  const viewer = clientOf(app, await loginAs(app, 'viewer'))
  const create = 'mutation ($name: String!) { createPerson(input: { name: $name }) { name } }'

  t.same((await graphql(editor, postGraphQL(create, { name: 'Ann' }))).body, { data: { createPerson: { name: 'Ann' } } })
  const afterEditor = await graphql(viewer, postGraphQL(create, { name: 'Vic' }))
  t.equal(afterEditor.status, 403, 'a viewer after an editor: refused')
  t.same(codesOf(afterEditor.body), ['FORBIDDEN'])

  const send = 'mutation ($id: ID!) { sendMessage(personId: $id, text: "hi") { text } }'
  const ann = (await gqlData<{ people: Array<{ id: string }> }>(api, '{ people { id } }')).people[0]!.id
  const admin = await loginAs(app, 'admin')
  const sender = clientOf(app, { 'x-api-key': (await apiKeyOf(app, admin, { scopes: ['messages:send'] }))['x-api-key'] })
  const reader = clientOf(app, { 'x-api-key': (await apiKeyOf(app, admin, { scopes: ['people:read'] }))['x-api-key'] })
  const refusedFirst = await graphql(reader, postGraphQL(send, { id: ann }))
  t.equal(refusedFirst.status, 403, 'a key without messages:send: refused')
  t.same((await graphql(sender, postGraphQL(send, { id: ann }))).body, { data: { sendMessage: { text: 'hi' } } }, 'a key with it, after: allowed')
  t.equal((await graphql(reader, postGraphQL(send, { id: ann }))).status, 403, 'and the first key still refused')
  t.same(await gqlData(api, '{ people(limit: 2) { name messages(limit: 2) { text } } }'), { people: [{ name: 'Ann', messages: [{ text: 'hi' }] }] }, 'one message, one person: only the allowed requests ran')
})

t.test('what variables decide is decided per request: @skip, limits and cost', async (t) => {
  const { app, api } = await build(t, { graphqlMaxCost: 1000 })
  const { createPerson: ada } = await gqlData<{ createPerson: { id: string } }>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const sender = clientOf(app, { 'x-api-key': (await apiKeyOf(app, await loginAs(app, 'admin'), { scopes: ['messages:send'] }))['x-api-key'] })
  const send = 'mutation ($id: ID!, $skip: Boolean!) { sendMessage(personId: $id, text: "hi") { text person @skip(if: $skip) { name } } }'
  const sequence: Array<[boolean, number]> = [[true, 200], [false, 403], [true, 200], [false, 403]]
  for (const [skip, status] of sequence) t.equal((await graphql(sender, postGraphQL(send, { id: ada.id, skip }))).status, status, `skip ${String(skip)}`)

  const friends = 'query ($n: Int!) { people(limit: 100) { friends(limit: $n) { id } } }'
  const answers = []
  for (const n of [1, 50, 1, 101, 1]) {
    const { status, body } = await graphql(api, getGraphQL(friends, { n }))
    answers.push(status === 200 ? 'ok' : codesOf(body)[0])
  }
  t.same(answers, ['ok', 'QUERY_TOO_COSTLY', 'ok', 'VALIDATION_FAILED', 'ok'], 'limits and cost follow each request\'s variables')
  const coerced = await graphql(api, getGraphQL(friends, { n: 'ten' }))
  t.equal(coerced.status, 400, 'variables that do not coerce')
  t.match(coerced.body.errors?.[0]?.message, /\$n/)
})
