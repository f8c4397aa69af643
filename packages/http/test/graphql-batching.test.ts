import t from 'tap'
import { CHUNK_ROWS } from '../src/turns.js'
import { countingSqliteApp, graphql, postGraphQL } from './helper.js'

/*
 * No N+1: the number of SQL statements a query costs depends on its shape,
 * never on how many people it touches: one per level, or one per
 * CHUNK_ROWS rows of a level bigger than that (turns.ts). Counted on a real
 * SQLite file, through the resolvers: the SQL plan, which answers some of
 * these queries in one statement per root field, has its own count
 * (graphql-sql-plan-statements.test.ts).
 */

// Everyone has friends and messages, so every level of the query has rows to load.
const seeded = (t: Parameters<typeof countingSqliteApp>[0], people: number) =>
  countingSqliteApp(t, { people, friends: 3, messages: 1, graphqlSqlPlan: false })

interface Checks {
  equal(found: unknown, wanted: unknown, message: string): boolean
  ok(value: unknown, message: string): boolean
  teardown(fn: () => unknown): void
}

/** Runs the query on `people` seeded people and answers how many statements it cost. */
const countStatements = async (t: Checks, people: number, query: string): Promise<number> => {
  const { api, statements } = await seeded(t, people)
  const { status, body } = await graphql(api, postGraphQL(query))
  t.equal(status, 200, 'answered')
  t.equal(body.errors, undefined, 'no errors')
  const list = (body.data as { people: Array<{ friends: unknown[] }> }).people
  t.equal(list.length, Math.min(people, 50), `${people} people seeded, at most 50 answered`)
  t.ok(list.every((p) => p.friends.length === 6), 'each with their six friends')
  return statements.length
}

t.test('people → friends → messages costs the same statements for 10 people as for 150', async (t) => {
  // 50 people, 500 friends, 500 messages: each level fits in one chunk.
  const query = '{ people(limit: 50) { friends(limit: 10) { name messages(limit: 1) { id } } } }'
  const few = await countStatements(t, 10, query)
  const many = await countStatements(t, 150, query)
  t.equal(few, 3, 'one statement per level: people, friends, messages')
  t.equal(many, few)
})

t.test('whole-person fields of list entries and Message.person load in one batch per level', async (t) => {
  const query = '{ people(limit: 50) { age friends(limit: 10) { name age address { city } messages(limit: 1) { person { name email } } } } }'
  const few = await countStatements(t, 10, query)
  const many = await countStatements(t, 150, query)
  t.equal(few, 6, 'people, their ages, friends, the friends\' ages, messages, their recipients')
  t.equal(many, few)
})

t.test('aliases with different limits are one batch each', async (t) => {
  const query = '{ people(limit: 50) { friends(limit: 10) { name } first: friends(limit: 1) { name } } }'
  t.equal(await countStatements(t, 150, query), 3)
})

t.test('a level of more than CHUNK_ROWS rows is read in chunks of at most that many', async (t) => {
  const { api, statements } = await seeded(t, 150)
  // 150 people, up to 10 friends each: room for 1,500 rows.
  const { status, body } = await graphql(api, postGraphQL('{ people(limit: 150) { friends(limit: 10) { id } } }'))
  t.equal(status, 200)
  t.ok((body.data as { people: Array<{ friends: unknown[] }> }).people.every((p) => p.friends.length === 6), 'everyone\'s six friends, whatever the chunk')
  t.equal(statements.length, 1 + Math.ceil(150 / Math.floor(CHUNK_ROWS / 10)), 'people, then one statement per chunk of friends')
})

t.test('connections of friends and inboxes load their first pages in one batch per level, a later page in one statement', async (t) => {
  const query = '{ people(limit: 50) { friendsConnection(first: 4) { edges { cursor node { name messagesConnection(first: 1) { edges { cursor node { id } } pageInfo { hasNextPage } } } } pageInfo { hasNextPage endCursor } } } }'
  const counted = async (people: number) => {
    const { api, statements } = await seeded(t, people)
    const { status, body } = await graphql(api, postGraphQL(query))
    t.equal(status, 200)
    t.equal(body.errors, undefined)
    type Page = { edges: Array<{ node: { messagesConnection: { edges: unknown[], pageInfo: { hasNextPage: boolean } } } }>, pageInfo: { hasNextPage: boolean } }
    const list = (body.data as { people: Array<{ friendsConnection: Page }> }).people
    t.ok(list.every((p) => p.friendsConnection.edges.length === 4 && p.friendsConnection.pageInfo.hasNextPage), 'four of six friends each, more to come')
    t.ok(list.every((p) => p.friendsConnection.edges.every((e) => e.node.messagesConnection.edges.length === 1 && !e.node.messagesConnection.pageInfo.hasNextPage)), 'each friend\'s one message, no more')
    return { api, statements, count: statements.length, first: list[0]! }
  }
  const few = await counted(10)
  const many = await counted(150)
  t.equal(few.count, 3, 'one statement per level: people, friends, messages')
  t.equal(many.count, few.count)

  const { api, statements, first } = many
  statements.length = 0
  const after = (first.friendsConnection as unknown as { pageInfo: { endCursor: string } }).pageInfo.endCursor
  const { status, body } = await graphql(api, postGraphQL('query ($after: String) { people(limit: 50) { friendsConnection(first: 4, after: $after) { edges { node { id } } } } }', { after }))
  t.equal(status, 200)
  t.ok(body.errors !== undefined && body.errors.every((e) => e.extensions?.code === 'INVALID_CURSOR'), 'the cursor fits one person\'s list: INVALID_CURSOR for the others')
  t.equal(statements.length, 2, 'people, then one page of friends: the others are refused before any read')
})
