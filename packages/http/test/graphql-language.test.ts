import t from 'tap'
import { build, gqlData, type GraphQLBody, type Injector } from './helper.js'

/*
 * Every construct of the seed's query language, each sent as a client sends
 * a query over GET: one URL, the parameters percent-encoded.
 */

/** The answer's data and errors; its cost report (`extensions`) is test/graphql-cost.test.ts's. */
const get = async (api: Injector, params: Record<string, string>) => {
  const response = await api.inject({ method: 'GET', url: `/graphql?${new URLSearchParams(params).toString()}` })
  const { extensions: _cost, ...body } = response.json<GraphQLBody & { extensions?: unknown }>()
  return { status: response.statusCode, body }
}

const seed = async (t: Parameters<typeof build>[0]) => {
  const { api } = await build(t)
  const ids: Record<string, string> = {}
  for (const [name, age] of [['Ada', 36], ['Bob', 40], ['Cyd', 25]] as const) {
    const { createPerson } = await gqlData<{ createPerson: { id: string } }>(api, 'mutation ($name: String!, $age: Int) { createPerson(input: { name: $name, age: $age }) { id } }', { name, age })
    ids[name] = createPerson.id
  }
  await gqlData(api, 'mutation ($a: ID!, $b: ID!) { addFriend(personId: $a, friendId: $b) { id } }', { a: ids.Ada, b: ids.Bob })
  await gqlData(api, 'mutation ($a: ID!, $b: ID!) { addFriend(personId: $a, friendId: $b) { id } }', { a: ids.Ada, b: ids.Cyd })
  return { api, ids: ids as { Ada: string, Bob: string, Cyd: string } }
}

t.test('fields: only the requested fields come back', async (t) => {
  const { api, ids } = await seed(t)
  const { status, body } = await get(api, { query: `{ person(id: "${ids.Ada}") { name } }` })
  t.equal(status, 200)
  t.same(body, { data: { person: { name: 'Ada' } } })
})

t.test('arguments: on the root field and on nested fields', async (t) => {
  const { api, ids } = await seed(t)
  const { body } = await get(api, { query: `{ person(id: "${ids.Ada}") { friends(limit: 1) { name } } people(limit: 2, name: "b") { name } }` })
  t.same(body, { data: { person: { friends: [{ name: 'Bob' }] }, people: [{ name: 'Bob' }] } })
})

t.test('aliases: the same field twice, with different arguments', async (t) => {
  const { api, ids } = await seed(t)
  const { body } = await get(api, { query: `{ ada: person(id: "${ids.Ada}") { name } bob: person(id: "${ids.Bob}") { name years: age } }` })
  t.same(body, { data: { ada: { name: 'Ada' }, bob: { name: 'Bob', years: 40 } } })
})

t.test('fragments: named and inline, shared between fields', async (t) => {
  const { api, ids } = await seed(t)
  const query = `
    { ada: person(id: "${ids.Ada}") { ...card friends { ...card } } cyd: person(id: "${ids.Cyd}") { ... on Person { name } } }
    fragment card on Person { name age }`
  const { body } = await get(api, { query })
  t.same(body, {
    data: {
      ada: { name: 'Ada', age: 36, friends: [{ name: 'Bob', age: 40 }, { name: 'Cyd', age: 25 }] },
      cyd: { name: 'Cyd' }
    }
  })
})

t.test('named operations: operationName chooses among several', async (t) => {
  const { api, ids } = await seed(t)
  const query = `query Names { people { name } } query Ages { person(id: "${ids.Bob}") { age } }`
  t.same((await get(api, { query, operationName: 'Ages' })).body, { data: { person: { age: 40 } } })
  t.same((await get(api, { query, operationName: 'Names' })).body, { data: { people: [{ name: 'Ada' }, { name: 'Bob' }, { name: 'Cyd' }] } })
  t.same((await get(api, { query: 'query Only { people(limit: 1) { name } }' })).body, { data: { people: [{ name: 'Ada' }] } }, 'one named operation needs no operationName')
})

t.test('variables: required (!), with defaults, and defaults overridden', async (t) => {
  const { api, ids } = await seed(t)
  const query = 'query Friends($id: ID!, $limit: Int = 1) { person(id: $id) { friends(limit: $limit) { name } } }'
  t.same((await get(api, { query, variables: JSON.stringify({ id: ids.Ada }) })).body, { data: { person: { friends: [{ name: 'Bob' }] } } }, 'the default applies')
  t.same((await get(api, { query, variables: JSON.stringify({ id: ids.Ada, limit: 5 }) })).body, { data: { person: { friends: [{ name: 'Bob' }, { name: 'Cyd' }] } } }, 'a given value wins')
  const missing = await get(api, { query })
  t.equal(missing.status, 400, 'a required variable left out')
  t.match(missing.body.errors?.[0]?.message, /Variable "\$id" of required type "ID!" was not provided/)
})

t.test('@include and @skip on boolean variables', async (t) => {
  const { api, ids } = await seed(t)
  const query = 'query ($id: ID!, $withAge: Boolean!, $noFriends: Boolean = false) { person(id: $id) { name age @include(if: $withAge) friends @skip(if: $noFriends) { name } } }'
  const ask = async (vars: Record<string, unknown>) => (await get(api, { query, variables: JSON.stringify({ id: ids.Bob, ...vars }) })).body
  t.same(await ask({ withAge: true }), { data: { person: { name: 'Bob', age: 40, friends: [{ name: 'Ada' }] } } })
  t.same(await ask({ withAge: false, noFriends: true }), { data: { person: { name: 'Bob' } } })
})
