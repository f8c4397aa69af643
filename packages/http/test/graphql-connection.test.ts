import t from 'tap'
import { build, getGraphQL, gqlData, graphql, nextCursor, type Injector } from './helper.js'

/*
 * peopleConnection pages like GET /people (Relay cursor connections), and
 * the cursors of one work in the other, both ways.
 */

interface Edge { cursor: string, node: { id: string, name: string } }
interface Connection { edges: Edge[], pageInfo: { hasNextPage: boolean, endCursor: string | null } }

const PAGE = 'query ($first: Int, $after: String, $name: String) { peopleConnection(first: $first, after: $after, name: $name) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } }'

const page = async (api: Injector, variables: Record<string, unknown>): Promise<Connection> =>
  (await gqlData<{ peopleConnection: Connection }>(api, PAGE, variables)).peopleConnection

const seed = async (api: Injector, names: string[]): Promise<Array<{ id: string, name: string }>> => {
  const people = []
  for (const name of names) people.push((await gqlData<{ createPerson: { id: string, name: string } }>(api, 'mutation ($name: String!) { createPerson(input: { name: $name }) { id name } }', { name })).createPerson)
  return people.sort((a, b) => (a.id < b.id ? -1 : 1))
}

t.test('pages through everyone in id order, as GET /people does', async (t) => {
  const { api } = await build(t)
  const people = await seed(api, ['Ada', 'Bob', 'Cyd', 'Dan', 'Eve'])
  const seen: Array<{ id: string, name: string }> = []
  let after: string | null = null
  const pages: Connection[] = []
  do {
    const current: Connection = await page(api, { first: 2, after })
    pages.push(current)
    seen.push(...current.edges.map((e) => e.node))
    after = current.pageInfo.hasNextPage ? current.pageInfo.endCursor : null
  } while (after !== null)
  t.same(seen, people, 'everyone once, in id order')
  t.same(pages.map((p) => p.edges.length), [2, 2, 1])
  t.same(pages.map((p) => p.pageInfo.hasNextPage), [true, true, false])
  t.equal(pages[2]!.pageInfo.endCursor, pages[2]!.edges[0]!.cursor, 'endCursor is the last edge\'s cursor')
  for (const p of pages) for (const [i, edge] of p.edges.entries()) if (i + 1 < p.edges.length) t.not(edge.cursor, p.edges[i + 1]!.cursor)
  t.same(await page(api, { first: 2, after: pages[2]!.pageInfo.endCursor }), { edges: [], pageInfo: { hasNextPage: false, endCursor: null } }, 'past the end: empty, no cursor')
  const defaults = await page(api, {})
  t.equal(defaults.edges.length, 5, 'first defaults to 100')
  const named = await page(api, { name: 'e', first: 1 })
  t.same(named.edges.map((e) => e.node.name), ['Eve'], 'the name filter as REST\'s ?name=')
  t.equal(named.pageInfo.hasNextPage, false)
})

t.test('cursors are interchangeable with GET /people, both ways', async (t) => {
  const { api } = await build(t)
  const people = await seed(api, ['Ada', 'Bob', 'Cyd', 'Dan', 'Eve'])
  const rest = await api.inject('/people?limit=2')
  const restCursor = nextCursor(rest.headers.link)
  t.ok(restCursor, 'REST handed out a cursor')
  const fromRest = await page(api, { first: 2, after: restCursor })
  t.same(fromRest.edges.map((e) => e.node), people.slice(2, 4), 'a REST cursor fed to GraphQL continues where REST stopped')
  t.equal(fromRest.pageInfo.endCursor, nextCursor((await api.inject(`/people?limit=2&cursor=${restCursor}`)).headers.link), 'and ends where REST\'s next page ends')
  const back = await api.inject(`/people?limit=10&cursor=${encodeURIComponent(fromRest.pageInfo.endCursor!)}`)
  t.equal(back.statusCode, 200)
  t.same(back.json(), people.slice(4), 'GraphQL\'s endCursor fed to REST continues there')
  const middle = fromRest.edges[0]!.cursor
  t.same((await api.inject(`/people?cursor=${encodeURIComponent(middle)}`)).json(), people.slice(3), 'any edge\'s cursor: the people after that edge')
  const garbage = await graphql(api, getGraphQL(PAGE, { after: 'garbage' }))
  t.equal(garbage.status, 200)
  t.same(garbage.body.errors?.map((e) => e.extensions?.code), ['INVALID_CURSOR'], 'a cursor this service did not issue: the code REST gives')
  t.equal(garbage.body.errors?.[0]?.extensions?.field, 'after', 'naming the argument as peopleConnection calls it')
  t.match(garbage.body.errors?.[0]?.message, /^after /)
})

t.test('peopleConnection counts in the cost model like people', async (t) => {
  const { api } = await build(t, { graphqlMaxCost: 1000 })
  const cost = async (query: string) => {
    const { status, body } = await graphql(api, getGraphQL(query))
    return status === 200 ? 'ok' : body.errors?.[0]?.extensions?.cost
  }
  t.equal(await cost('{ peopleConnection(first: 1000) { edges { node { id } } pageInfo { hasNextPage } } }'), 'ok', 'first 1000: 1,000')
  t.equal(await cost('{ peopleConnection(first: 100) { edges { cursor node { friends(limit: 10) { id } } } } }'), 1100, '100 + 100 x 10')
  t.equal(await cost('{ peopleConnection { edges { node { friends { id } } } } }'), 1100, 'the default first is 100')
  t.equal(await cost('{ peopleConnection(first: 1, name: "a") { edges { node { id } } } }'), 2001, 'a name search costs 2,000 more')
})
