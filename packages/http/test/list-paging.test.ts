import t, { type Test } from 'tap'
import { uuidv7Generator, type Person, type Ports } from '@people-service/domain'
import { build, forgedCursor, getGraphQL, gqlData, graphql, nextCursor, nextLink, postGraphQL, type Injector } from './helper.js'

/*
 * Lists that end: a person's friends and inbox page through REST (`Link`
 * cursors) and GraphQL (friendsConnection, messagesConnection), every entry
 * once, with cursors that work in either API. Run over the in-memory
 * adapters here and over SQLite and PostgreSQL by the suites under sqlite/
 * and postgres/.
 */

interface Summary { id: string, name: string }
interface Connection<T> { edges: Array<{ cursor: string, node: T }>, pageInfo: { hasNextPage: boolean, endCursor: string | null } }

/** `count` people stored straight through the ports (the listing is what goes through the server), in id order. */
const storePeople = async (ports: Ports, count: number, prefix: string): Promise<Summary[]> => {
  const ids = uuidv7Generator()
  const now = new Date()
  const people: Summary[] = []
  for (let i = 0; i < count; i++) {
    const person: Person = { id: ids.next(), name: `${prefix} ${i}`, age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await ports.people.insert(person)
    people.push({ id: person.id, name: person.name })
  }
  return people
}

/** A hub with `count` friends, stored in id order (the order a list of friends keeps). */
const hubWithFriends = async (ports: Ports, count: number) => {
  const [hub, ...friends] = await storePeople(ports, count + 1, 'Person')
  for (const friend of friends) await ports.friendships.add(hub!.id, friend.id, new Date())
  return { hub: hub!, friends }
}

/** Every page of a REST list, following `Link` from `url`: the entries and each page's size. */
const followLinks = async <T>(api: Injector, url: string) => {
  const items: T[] = []
  const sizes: number[] = []
  let next: string | undefined = url
  while (next !== undefined) {
    const response = await api.inject(next)
    if (response.statusCode !== 200) throw new Error(`${next}: ${response.statusCode} ${response.body}`)
    const page = response.json<T[]>()
    items.push(...page)
    sizes.push(page.length)
    next = nextLink(response.headers.link)
  }
  return { items, sizes }
}

const FRIENDS = 'query ($id: ID!, $first: Int, $after: String) { person(id: $id) { friendsConnection(first: $first, after: $after) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } } } }'
const INBOX = 'query ($id: ID!, $first: Int, $after: String) { person(id: $id) { messagesConnection(first: $first, after: $after) { edges { cursor node { id text } } pageInfo { hasNextPage endCursor } } } }'

const friendsPage = async (api: Injector, variables: Record<string, unknown>) =>
  (await gqlData<{ person: { friendsConnection: Connection<Summary> } }>(api, FRIENDS, variables)).person.friendsConnection

/** Every page of a connection, following endCursor. */
const followConnection = async <T>(t: Test, page: (after: string | null) => Promise<Connection<T>>) => {
  const nodes: T[] = []
  const sizes: number[] = []
  let after: string | null = null
  do {
    const current: Connection<T> = await page(after)
    nodes.push(...current.edges.map((edge) => edge.node))
    sizes.push(current.edges.length)
    t.equal(current.pageInfo.endCursor, current.edges.at(-1)?.cursor ?? null, 'endCursor is the last edge\'s cursor')
    after = current.pageInfo.hasNextPage ? current.pageInfo.endCursor : null
  } while (after !== null)
  return { nodes, sizes }
}

t.test('a person with 500 friends lists all 500, once each and in order, through REST and GraphQL', async (t) => {
  const { api, ports } = await build(t)
  const { hub, friends } = await hubWithFriends(ports, 500)

  const rest = await followLinks<Summary>(api, `/person/${hub.id}/friends?limit=100`)
  t.same(rest.items, friends, 'REST: every friend once, in the order they were stored')
  t.same(rest.sizes, [100, 100, 100, 100, 100], 'five full pages, and no Link after the last')

  const byDefault = await api.inject(`/person/${hub.id}/friends`)
  t.equal(byDefault.json<Summary[]>().length, 10, 'ten by default')
  t.match(nextLink(byDefault.headers.link), new RegExp(`^/person/${hub.id}/friends\\?cursor=`), 'with a Link to the next page')
  const kept = await api.inject(`/person/${hub.id}/friends?limit=7`)
  t.match(nextLink(kept.headers.link), /[?&]limit=7(&|$)/, 'the Link keeps the limit asked for')

  const graph = await followConnection(t, (after) => friendsPage(api, { id: hub.id, first: 100, after }))
  t.same(graph.nodes, friends, 'GraphQL: the same friends in the same order')
  t.same(graph.sizes, [100, 100, 100, 100, 100])
  t.same((await friendsPage(api, { id: hub.id })).edges.length, 10, 'first defaults to 10')
})

t.test('friend cursors are interchangeable between REST and GraphQL, and survive the friend they name', async (t) => {
  const { api, ports } = await build(t)
  const { hub, friends } = await hubWithFriends(ports, 12)

  const rest = await api.inject(`/person/${hub.id}/friends?limit=4`)
  const restCursor = nextCursor(rest.headers.link)!
  const fromRest = await friendsPage(api, { id: hub.id, first: 4, after: restCursor })
  t.same(fromRest.edges.map((edge) => edge.node), friends.slice(4, 8), 'a REST cursor given to GraphQL continues where REST stopped')
  t.equal(fromRest.pageInfo.endCursor, nextCursor((await api.inject(`/person/${hub.id}/friends?limit=4&cursor=${restCursor}`)).headers.link), 'and ends where REST\'s next page ends')
  const back = await api.inject(`/person/${hub.id}/friends?limit=100&cursor=${encodeURIComponent(fromRest.pageInfo.endCursor!)}`)
  t.same(back.json(), friends.slice(8), 'GraphQL\'s endCursor given to REST continues there')
  const middle = fromRest.edges[1]!.cursor
  t.same((await api.inject(`/person/${hub.id}/friends?limit=2&cursor=${encodeURIComponent(middle)}`)).json(), friends.slice(6, 8), 'any edge\'s cursor: the friends after that edge')

  // The friend the cursor stops at is deleted, another is unfriended, and a
  // newcomer is befriended: the next page goes on after the cursor's place.
  t.equal((await api.inject({ method: 'DELETE', url: `/person/${friends[7]!.id}` })).statusCode, 200)
  t.equal((await api.inject({ method: 'DELETE', url: `/person/${hub.id}/friends/${friends[9]!.id}` })).statusCode, 200)
  const newcomer = (await api.inject({ method: 'POST', url: '/person', payload: { name: 'Newcomer' } })).json<Summary>()
  t.equal((await api.inject({ method: 'PUT', url: `/person/${hub.id}/friends/${newcomer.id}` })).statusCode, 200)
  const rest2 = await followLinks<Summary>(api, `/person/${hub.id}/friends?limit=2&cursor=${encodeURIComponent(fromRest.pageInfo.endCursor!)}`)
  t.same(rest2.items, [friends[8], friends[10], friends[11], { id: newcomer.id, name: 'Newcomer' }], 'the rest, without the unfriended, with the newcomer last')
})

t.test('a friends cursor works for its own list only; bad ones are 400 in REST and an error naming `after` in GraphQL', async (t) => {
  const { api, ports } = await build(t)
  const { hub, friends } = await hubWithFriends(ports, 3)
  const own = nextCursor((await api.inject(`/person/${hub.id}/friends?limit=1`)).headers.link)!
  const peopleCursor = nextCursor((await api.inject('/people?limit=1')).headers.link)!
  const inboxCursor = forgedCursor([`inbox:${hub.id}`, new Date().toISOString(), hub.id])
  const forged = [
    ['another person\'s friends', own, friends[0]!.id],
    ['a cursor of /people', peopleCursor, hub.id],
    ['an inbox\'s cursor', inboxCursor, hub.id],
    ['a position that is not a number', forgedCursor([`friends:${hub.id}`, 'one']), hub.id],
    ['a position in another notation', forgedCursor([`friends:${hub.id}`, '1e2']), hub.id],
    ['a negative position', forgedCursor([`friends:${hub.id}`, '-1']), hub.id],
    ['not base64 JSON', 'garbage', hub.id]
  ] as const
  for (const [what, cursor, owner] of forged) {
    const response = await api.inject(`/person/${owner}/friends?cursor=${encodeURIComponent(cursor)}`)
    t.equal(response.statusCode, 400, `REST: ${what}`)
    t.equal(response.json().code, 'INVALID_CURSOR', what)
    const { status, body } = await graphql(api, getGraphQL(FRIENDS, { id: owner, after: cursor }))
    t.equal(status, 200, `GraphQL: ${what}`)
    t.same(body.errors?.map((error) => [error.extensions?.code, error.extensions?.field, error.path]), [['INVALID_CURSOR', 'after', ['person', 'friendsConnection']]], what)
  }
  t.same((await api.inject(`/person/${hub.id}/friends?cursor=${encodeURIComponent(forgedCursor([`friends:${hub.id}`, '999999999999999']))}`)).json(), [], 'a position past everyone: an empty page')
  t.equal((await api.inject(`/person/${hub.id}/friends?cursor=${'a'.repeat(513)}`)).statusCode, 400, 'a cursor longer than any issued')
  const nobody = uuidv7Generator().next()
  t.equal((await api.inject(`/person/${nobody}/friends`)).statusCode, 404, 'nobody\'s friends: 404')
  for (const [first, after] of [[0, null], [101, null], [1, '']] as const) {
    const { status, body } = await graphql(api, getGraphQL(FRIENDS, { id: hub.id, first, after }))
    t.equal(status, 400, `first: ${first}, after: ${JSON.stringify(after)}`)
    t.equal(body.errors?.[0]?.extensions?.code, 'VALIDATION_FAILED')
  }
})

t.test('an inbox pages through GraphQL as through REST, newest first, cursors interchangeable', async (t) => {
  const { api, ports } = await build(t)
  const [ada, bob] = await storePeople(ports, 2, 'Person')
  const ids = uuidv7Generator()
  const start = Date.parse('2026-11-21T10:00:00.000Z')
  // Some sent at the same instant: the id breaks the tie, as in REST.
  for (let i = 0; i < 45; i++) {
    await ports.messages.insert({ id: ids.next(), personId: ada!.id, text: `m${i}`, senderId: 'test', sentAt: new Date(start + Math.floor(i / 3) * 1000) })
  }
  await ports.messages.insert({ id: ids.next(), personId: bob!.id, text: 'not for Ada', senderId: 'test', sentAt: new Date(start) })
  const inbox = async (variables: Record<string, unknown>) =>
    (await gqlData<{ person: { messagesConnection: Connection<{ id: string, text: string }> } }>(api, INBOX, variables)).person.messagesConnection

  const rest = await followLinks<{ id: string, text: string }>(api, `/person/${ada!.id}/messages`)
  t.same(rest.sizes, [20, 20, 5])
  t.same(rest.items.map((m) => m.text), Array.from({ length: 45 }, (_, i) => `m${44 - i}`), 'REST: newest first')
  const graph = await followConnection(t, (after) => inbox({ id: ada!.id, after }))
  t.same(graph.sizes, [20, 20, 5], 'first defaults to 20')
  t.same(graph.nodes.map((m) => m.id), rest.items.map((m) => m.id), 'GraphQL: the same messages in the same order')

  const restCursor = nextCursor((await api.inject(`/person/${ada!.id}/messages?limit=10`)).headers.link)!
  const fromRest = await inbox({ id: ada!.id, first: 10, after: restCursor })
  t.same(fromRest.edges.map((e) => e.node.id), rest.items.slice(10, 20).map((m) => m.id), 'a REST cursor continues in GraphQL')
  const back = await api.inject(`/person/${ada!.id}/messages?limit=100&cursor=${encodeURIComponent(fromRest.pageInfo.endCursor!)}`)
  t.same(back.json<Array<{ id: string }>>().map((m) => m.id), rest.items.slice(20).map((m) => m.id), 'and GraphQL\'s in REST')
  const bobs = await inbox({ id: bob!.id, first: 5 })
  t.same(bobs.edges.map((e) => e.node.text), ['not for Ada'], 'each inbox its own messages')
  t.equal(bobs.pageInfo.hasNextPage, false)
  const { body } = await graphql(api, getGraphQL(INBOX, { id: bob!.id, after: restCursor }))
  t.same(body.errors?.map((e) => [e.extensions?.code, e.extensions?.field]), [['INVALID_CURSOR', 'after']], 'another inbox\'s cursor')
})

t.test('the connections cost what the lists they page cost', async (t) => {
  const { api, ports } = await build(t)
  const [ada] = await storePeople(ports, 1, 'Person')
  const requested = async (query: string): Promise<unknown> => {
    const { status, extensions } = await graphql(api, postGraphQL(query, { id: ada!.id }))
    t.equal(status, 200, query)
    return extensions?.cost?.requested
  }
  const pairs: Array<[string, string]> = [
    ['friendsConnection(first: 100) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } }', 'friends(limit: 100) { id name }'],
    ['friendsConnection { edges { node { id } } }', 'friends { id }'],
    ['friendsConnection(first: 50) { edges { node { age address { city } } } }', 'friends(limit: 50) { age address { city } }'],
    ['friendsConnection(first: 20) { edges { node { friendsConnection(first: 5) { edges { node { name } } } } } }', 'friends(limit: 20) { friends(limit: 5) { name } }'],
    ['messagesConnection(first: 40) { edges { cursor node { id text sentAt } } pageInfo { hasNextPage } }', 'messages(limit: 40) { id text sentAt }'],
    ['messagesConnection { edges { node { text person { email } } } }', 'messages { text person { email } }']
  ]
  for (const [connection, list] of pairs) {
    const cost = await requested(`query ($id: ID!) { person(id: $id) { ${connection} } }`)
    t.type(cost, 'number')
    t.equal(cost, await requested(`query ($id: ID!) { person(id: $id) { ${list} } }`), `${connection} costs as ${list}`)
  }
})
