import t from 'tap'
import { countingSqliteApp, graphql, postGraphQL } from './helper.js'

/*
 * The SQL plan's promise, counted on a real SQLite file: one statement per
 * root field, whatever the depth of the selection and the number of people,
 * where the resolvers need one per level.
 */

const seeded = (t: Parameters<typeof countingSqliteApp>[0], graphqlSqlPlan: boolean) =>
  countingSqliteApp(t, { people: 30, friends: 4, graphqlSqlPlan })

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

t.test('root fields whose rows together pass what one request may read go to the resolvers, which take turns', async (t) => {
  const { api, statements } = await seeded(t, true)
  const page = 'people(limit: 100) { friends(limit: 19) { id } }'
  const { status, body } = await graphql(api, postGraphQL(`{ a: ${page} b: ${page} }`))
  t.equal(status, 200)
  t.equal(body.errors, undefined, 'no errors')
  t.equal((body.data?.a as unknown[]).length, 30, 'every seeded person')
  t.ok(statements.length > 2, `${statements.length} statements, not one per root field`)
})
