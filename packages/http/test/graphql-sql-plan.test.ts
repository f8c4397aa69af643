import t from 'tap'
import { cursorAfterPerson, uuidv7Generator, type Person, type Ports } from '@people-service/domain'
import { buildSchema, getOperationAST, Kind, parse, type DocumentNode, type FragmentDefinitionNode } from 'graphql'
import { schema } from '../src/graphql/schema.js'
import { MOST_ROWS_PER_REQUEST, SqlPlan } from '../src/graphql/sql-plan.js'
import { apiKeyOf, build, clientOf, getGraphQL, postGraphQL, type Injector } from './helper.js'

/*
 * The SQL plan (sql-plan.ts) answers queries of people and friends with one
 * statement per root field that builds the JSON; the resolvers are the
 * reference. The same requests through two apps over the same data, one
 * with the plan and one without, must get the same status and the same
 * bytes: data, nulls, errors, cost. Run over memory here, over SQLite and
 * PostgreSQL from test/sqlite and test/postgres.
 */

const ids = uuidv7Generator()

// Names that JSON must escape, and some it need not.
const NAMES = ['Ada Lovelace', 'Zoë "Z" O\'Brien', 'tab\tand\nnewline', 'back\\slash / slash', 'emoji 🎉 and \u2028', 'control \u0001\u001f\u007f', '李小龍']

const seed = async (ports: Ports): Promise<Person[]> => {
  const now = new Date()
  const people: Person[] = []
  for (let i = 0; i < 40; i++) {
    const person: Person = {
      id: ids.next(),
      name: NAMES[i % NAMES.length] ?? `Person ${i}`,
      age: i % 3 === 0 ? null : 20 + i,
      email: i % 4 === 0 ? null : `p${i}@example.org`,
      address: i % 5 === 0 ? null : i % 5 === 1 ? { street: null, city: null, country: null } : { street: `${i} Main St`, city: 'Zürich', country: i % 2 === 0 ? 'CH' : null },
      createdAt: now,
      updatedAt: now,
      version: 1
    }
    await ports.people.insert(person)
    people.push(person)
  }
  // The first person has more friends than a default list shows; the last has none.
  for (let i = 0; i < 39; i++) {
    const friends = i === 0 ? 25 : 1 + (i % 4)
    for (let k = 1; k <= friends; k++) {
      const friend = (i + k * 7) % 39
      if (friend !== i) await ports.friendships.add(people[i]!.id, people[friend]!.id, now)
    }
  }
  return people
}

/** Two apps over the same data: the plan on, and off. */
const apps = async (t: Parameters<typeof build>[0]) => {
  const on = await build(t, { graphqlSqlPlan: true })
  const off = await build(t, { ports: on.ports, graphqlSqlPlan: false })
  const people = await seed(on.ports)
  return { on: on.api, off: off.api, people, apps: { on: on.app, off: off.app }, admin: on.admin }
}

interface Checks {
  equal(found: unknown, wanted: unknown, message: string): boolean
}

const same = async (t: Checks, { on, off }: { on: Injector, off: Injector }, request: Parameters<Injector['inject']>[0], name: string): Promise<string> => {
  // Twice: the first run of an operation is interpreted, the next compiled (graphql-jit).
  for (let run = 0; run < 2; run++) {
    const [planned, resolved] = await Promise.all([on.inject(request), off.inject(request)])
    t.equal(planned.statusCode, resolved.statusCode, `${name}: the same status`)
    t.equal(planned.body, resolved.body, `${name}: the same bytes`)
    t.equal(planned.headers['content-type'], resolved.headers['content-type'], `${name}: the same media type`)
    if (run === 1) return planned.body
  }
  return ''
}

t.test('queries of people and friends answer the same bytes with and without the plan', async (t) => {
  const data = await apps(t)
  const [ada, second, , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , , last] = data.people
  const cases: Array<[string, string, Record<string, unknown>?]> = [
    ['person + friends(10), the bench query', 'query ($id: ID!) { person(id: $id) { name age friends(limit: 10) { name } } }', { id: ada!.id }],
    ['people(100) × friends(10), the bench query', '{ people(limit: 100) { name friends(limit: 10) { name } } }'],
    ['every field, address and all', '{ people { id name age email address { street city country } friends { id name age email address { city } } } }'],
    ['a person nobody has', 'query ($id: ID!) { person(id: $id) { name } }', { id: ids.next() }],
    ['an id that is no id', '{ person(id: "no-such-id") { name } }'],
    ['a person without friends', 'query ($id: ID!) { person(id: $id) { name friends { name } } }', { id: last!.id }],
    ['aliases, __typename, the same key twice', `{ __typename first: person(id: "${ada!.id}") { __typename who: name name address { __typename town: city } pals: friends(limit: 3) { n: name } best: friends(limit: 1) { id } } }`],
    ['fields under one key merged', `{ person(id: "${ada!.id}") { friends(limit: 4) { id } friends(limit: 4) { name } ... on Person { friends(limit: 4) { age } } } }`],
    ['friends of friends of friends', `{ person(id: "${ada!.id}") { friends(limit: 5) { name friends(limit: 5) { name friends(limit: 2) { id name } } } } }`],
    ['fragments, inline and named', 'query { people(limit: 5) { ...Who friends(limit: 2) { ...Who } } } fragment Who on Person { id ... on Person { name } }'],
    ['@include and @skip from variables', 'query ($all: Boolean!, $n: Int) { people(limit: 4) { name age @include(if: $all) email @skip(if: $all) friends(limit: $n) @include(if: $all) { name } } }', { all: true, n: 2 }],
    ['@include and @skip, the other way', 'query ($all: Boolean!, $n: Int) { people(limit: 4) { name age @include(if: $all) email @skip(if: $all) friends(limit: $n) @include(if: $all) { name } } }', { all: false, n: 2 }],
    ['friends(limit: 0) and limit: null', `{ person(id: "${ada!.id}") { none: friends(limit: 0) { name } dflt: friends(limit: null) { name } } }`],
    ['a page after a cursor', 'query ($c: String) { people(limit: 3, cursor: $c) { id } }', { c: cursorAfterPerson(second!.id) }],
    ['the last page', 'query ($c: String) { people(limit: 3, cursor: $c) { id } }', { c: cursorAfterPerson(last!.id) }],
    ['a cursor this service did not issue', '{ people(limit: 3, cursor: "bm9wZQ") { id } }'],
    ['a cursor beside a person', `{ person(id: "${ada!.id}") { name } people(cursor: "bm9wZQ") { id } }`],
    ['several root fields', `{ a: person(id: "${ada!.id}") { name } b: people(limit: 2) { name } c: person(id: "${second!.id}") { age } }`],
    ['a name filter (the resolvers)', '{ people(limit: 5, name: "ada") { name friends { name } } }'],
    ['messages (the resolvers)', `{ person(id: "${ada!.id}") { name messages { text } } }`],
    ['more rows than one statement reads (the resolvers)', '{ people(limit: 300) { friends(limit: 10) { name } } }'],
    ['two root fields each within the rows, together past them (the resolvers)', '{ a: people(limit: 100) { friends(limit: 19) { id } } b: people(limit: 100) { friends(limit: 19) { id } } }'],
    ['too costly: refused', '{ people(limit: 1000) { friends(limit: 100) { name } } }'],
    ['a field that is not there', '{ people { nope } }']
  ]
  const answers = new Map<string, string>()
  for (const [name, query, variables] of cases) {
    answers.set(name, await same(t, data, postGraphQL(query, variables), name))
    await same(t, data, getGraphQL(query, variables), `${name} (GET)`)
  }
  // The same bytes, and the right ones: a few answers spelled out.
  t.equal(answers.get('a person nobody has'), '{"data":{"person":null},"extensions":{"cost":{"requested":0,"charged":1}}}')
  const bench = JSON.parse(answers.get('person + friends(10), the bench query') ?? '{}') as { data: { person: { name: string, friends: unknown[] } } }
  t.match(bench.data.person, { name: ada!.name, age: ada!.age }, 'the person asked for')
  t.equal(bench.data.person.friends.length, 10, 'ten of the first person\'s friends')
  t.match(answers.get('a cursor this service did not issue'), /"data":null,"errors":\[\{"message":"cursor is not one this service issued".*"INVALID_CURSOR"/)
  t.ok(MOST_ROWS_PER_REQUEST < 300 * 11, 'the big query is past what one request reads')
  t.ok(MOST_ROWS_PER_REQUEST >= 100 * 20 && MOST_ROWS_PER_REQUEST < 2 * 100 * 20, 'each alias of the two is within it, both are not')
})

t.test('callers the policy refuses, or that have no credentials, get the same answers with and without the plan', async (t) => {
  const data = await apps(t)
  const key = await apiKeyOf(data.apps.on, data.admin, { scopes: ['messages:send'] })
  const credentials = { 'x-api-key': key['x-api-key'] }
  const query = '{ people(limit: 2) { name friends { name } } }'
  const refused = { on: clientOf(data.apps.on, credentials), off: clientOf(data.apps.off, credentials) }
  t.match(await same(t, refused, postGraphQL(query), 'a key without people:read'), /FORBIDDEN/)
  const anonymous = { on: clientOf(data.apps.on, {}), off: clientOf(data.apps.off, {}) }
  t.match(await same(t, anonymous, postGraphQL(query), 'no credentials'), /UNAUTHENTICATED/)
})

t.test('the plan looks at each fragment once per level, however often it is spread', async (t) => {
  // 60 fragments each spreading the next twice: looked at where spread, 2^60
  // steps (the document limits refuse such a document first; this is the
  // plan's own guard).
  const doubling = (last: string): DocumentNode => parse('query Doubling { people(limit: 1) { ...F0 } } ' +
    Array.from({ length: 60 }, (_, i) => `fragment F${i} on Person { ...F${i + 1} ...F${i + 1} }`).join(' ') + ` fragment F60 on Person { ${last} }`)
  const planOf = (document: DocumentNode) => {
    const fragments: Record<string, FragmentDefinitionNode> = {}
    for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition
    return SqlPlan.of(buildSchema(schema), getOperationAST(document)!, fragments, () => { throw new Error('not run here') })
  }
  const started = Date.now()
  t.ok(planOf(doubling('id name')) instanceof SqlPlan, 'people and their names: a plan')
  t.equal(planOf(doubling('id messages(limit: 1) { text }')), undefined, 'a field the plan does not compile, at the end of the fragments: no plan')
  t.ok(Date.now() - started < 1000, `both looked at in ${Date.now() - started} ms`)
})
