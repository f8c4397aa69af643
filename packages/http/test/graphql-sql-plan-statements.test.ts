import t from 'tap'
import { uuidv7Generator, type Person } from '@people-service/domain'
import { createRepositories } from '@people-service/infra'
import { build, graphql, portsOver, postGraphQL, sqliteDatabase } from './helper.js'

/*
 * The SQL plan's promise, counted on a real SQLite file: one statement per
 * root field, whatever the depth of the selection and the number of people,
 * where the resolvers need one per level.
 */

const ids = uuidv7Generator()

const seeded = async (t: Parameters<typeof sqliteDatabase>[0], graphqlSqlPlan: boolean) => {
  const database = await sqliteDatabase(t)
  const repositories = createRepositories(database)
  const people: Person[] = []
  const now = new Date()
  for (let i = 0; i < 30; i++) {
    const person: Person = { id: ids.next(), name: `Person ${i}`, age: i, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await repositories.people.insert(person)
    people.push(person)
  }
  for (let i = 0; i < 30; i++) {
    for (let k = 1; k <= 4; k++) await repositories.friendships.add(people[i]!.id, people[(i + k) % 30]!.id, now)
  }
  const { api } = await build(t, { ports: portsOver(repositories), graphqlSqlPlan })
  // The caller's account is read once, then served from the credential cache.
  await api.inject('/users/me')
  database.statements.length = 0
  return { api, statements: database.statements, people }
}

const QUERY = (id: string) => `{
  one: person(id: "${id}") { name address { city } friends(limit: 3) { name friends(limit: 3) { name age friends(limit: 2) { id } } } }
  page: people(limit: 20) { id friends(limit: 5) { name age } }
  __typename
}`

t.test('a compiled query runs one statement per root field, each building its JSON', async (t) => {
  const { api, statements, people } = await seeded(t, true)
  const { status, body } = await graphql(api, postGraphQL(QUERY(people[0]!.id)))
  t.equal(status, 200)
  t.equal(body.errors, undefined, 'no errors')
  t.equal((body.data?.page as unknown[]).length, 20, 'the whole page')
  t.equal(statements.length, 2, 'two root fields that read, two statements')
  t.ok(statements.every((statement) => statement.includes('json_object(')), 'each builds JSON')
})

t.test('the same query with the resolvers reads level by level', async (t) => {
  const { api, statements, people } = await seeded(t, false)
  const { status } = await graphql(api, postGraphQL(QUERY(people[0]!.id)))
  t.equal(status, 200)
  t.ok(statements.length > 2, `${statements.length} statements`)
})
