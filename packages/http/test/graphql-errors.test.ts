import t from 'tap'
import { sql } from 'kysely'
import { createRepositories } from '@people-service/infra'
import { build, getGraphQL, gqlData, graphql, portsOver, postGraphQL, sqliteDatabase } from './helper.js'

interface Created { createPerson: { id: string } }
const UNKNOWN = '01900000-0000-7000-8000-000000000000'

const codesOf = (body: { errors?: Array<{ extensions?: Record<string, unknown> }> }) =>
  (body.errors ?? []).map((e) => e.extensions?.code)

t.test('a domain error reaches the client with the code REST shows, data null where it failed', async (t) => {
  const { api } = await build(t)
  const { createPerson: ada } = await gqlData<Created>(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  const cases: Array<[string, Record<string, unknown>, string, string?]> = [
    ['mutation ($id: ID!) { updatePerson(id: $id, input: { name: "x" }) { id } }', { id: UNKNOWN }, 'PERSON_NOT_FOUND'],
    ['mutation ($id: ID!) { deletePerson(id: $id) }', { id: UNKNOWN }, 'PERSON_NOT_FOUND'],
    ['mutation ($id: ID!) { addFriend(personId: $id, friendId: $id) { id } }', { id: ada.id }, 'SELF_FRIENDSHIP', 'friendId'],
    ['mutation ($id: ID!) { addFriend(personId: $id, friendId: "' + UNKNOWN + '") { id } }', { id: ada.id }, 'PERSON_NOT_FOUND'],
    ['mutation ($id: ID!) { removeFriend(personId: $id, friendId: "nope") { id } }', { id: ada.id }, 'PERSON_NOT_FOUND'],
    ['mutation ($id: ID!) { sendMessage(personId: $id, text: "hi") { id } }', { id: UNKNOWN }, 'PERSON_NOT_FOUND'],
    ['{ people(cursor: "garbage") { id } }', {}, 'INVALID_CURSOR', 'cursor']
  ]
  for (const [query, variables, code, field] of cases) {
    const { status, body } = await graphql(api, postGraphQL(query, variables))
    t.equal(status, 200, `${code}: the request was fine, a field failed`)
    t.equal(body.data, null)
    t.same(codesOf(body), [code], query)
    t.equal(body.errors?.[0]?.extensions?.field, field)
    t.type(body.errors?.[0]?.path?.[0], 'string', 'the error says which field failed')
  }
})

t.test('an id of a megabyte is answered PERSON_NOT_FOUND quoting its start, not echoed whole', async (t) => {
  const { api } = await build(t)
  const id = 'x'.repeat(1_000_000)
  const { status, body } = await graphql(api, postGraphQL('mutation ($id: ID!) { deletePerson(id: $id) }', { id }))
  t.equal(status, 200)
  t.same(codesOf(body), ['PERSON_NOT_FOUND'])
  t.equal(body.errors?.[0]?.message, `no person with id "${'x'.repeat(64)}"… (1000000 characters)`)
})

t.test('a query that does not parse or validate is 400 with every error, and no data', async (t) => {
  const { api } = await build(t)
  const parse = await graphql(api, getGraphQL('{ people { name }'))
  t.equal(parse.status, 400)
  t.same(codesOf(parse.body), ['GRAPHQL_PARSE_FAILED'])
  t.notOk('data' in parse.body)
  const two = await graphql(api, getGraphQL('{ nope people { nada } }'))
  t.equal(two.status, 400, 'two errors are still 400 (stock Mercurius says 200)')
  t.same(codesOf(two.body), ['GRAPHQL_VALIDATION_FAILED', 'GRAPHQL_VALIDATION_FAILED'])
  t.match(two.body.errors?.[1]?.message, /nada/)
  t.notOk('data' in two.body)
  const post = await graphql(api, postGraphQL('{ nope people { nada } }'))
  t.equal(post.status, 400)
  t.equal(post.body.errors?.length, 2)
})

t.test('variables that are missing, of the wrong type or not JSON are 400', async (t) => {
  const { api } = await build(t)
  const query = 'query ($id: ID!) { person(id: $id) { name } }'
  for (const request of [getGraphQL(query), getGraphQL(query, { id: 5.5 }), postGraphQL(query, { id: null })]) {
    const { status, body } = await graphql(api, request)
    t.equal(status, 400)
    t.match(body.errors?.[0]?.message, /\$id/)
  }
  for (const variables of ['{not json', '[1]', '"text"']) {
    const { status, body } = await graphql(api, { method: 'GET', url: '/graphql', query: { query, variables } })
    t.equal(status, 400, variables)
    t.same(body.errors?.[0], { message: 'variables must be a JSON object', extensions: { code: 'BAD_REQUEST' } })
  }
})

t.test('an operationName that selects nothing is 400', async (t) => {
  const { api } = await build(t)
  const document = 'query A { people { id } } query B { people { name } }'
  for (const request of [getGraphQL(document), postGraphQL(document), getGraphQL(document, undefined, 'C'), postGraphQL(document, undefined, 'C')]) {
    const { status, body } = await graphql(api, request)
    t.equal(status, 400)
    t.same(codesOf(body), ['GRAPHQL_VALIDATION_FAILED'])
  }
  t.same((await graphql(api, getGraphQL(document, undefined, 'B'))).body, { data: { people: [] } })
  const again = await graphql(api, getGraphQL(document, undefined, 'C'))
  t.equal(again.status, 400, 'a document that passed with B is checked anew with C')
  t.same(codesOf(again.body), ['GRAPHQL_VALIDATION_FAILED'])
})

t.test('a mutation over GET is 405 with Allow: POST, and nothing runs', async (t) => {
  const { api } = await build(t)
  const { status, body, response } = await graphql(api, getGraphQL('mutation { createPerson(input: { name: "Eve" }) { id } }'))
  t.equal(status, 405)
  t.equal(response.headers.allow, 'POST')
  t.same(codesOf(body), ['METHOD_NOT_ALLOWED'])
  t.same(await gqlData(api, '{ people { id } }'), { people: [] }, 'no one was created')
  const head = await api.inject({ ...getGraphQL('mutation { createPerson(input: { name: "Eve" }) { id } }'), method: 'HEAD' })
  t.equal(head.statusCode, 405, 'HEAD, which runs the GET route, is refused too')
  t.equal(head.headers.allow, 'POST')
  t.same(await gqlData(api, '{ people { id } }'), { people: [] }, 'still no one')
})

t.test('other methods on /graphql and /graphiql are 405 with Allow', async (t) => {
  const { api } = await build(t)
  for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
    const response = await api.inject({ method, url: '/graphql' })
    t.equal(response.statusCode, 405, method)
    t.equal(response.headers.allow, 'GET, HEAD, POST')
    t.match(response.json(), { statusCode: 405, code: 'METHOD_NOT_ALLOWED' })
  }
  const ide = await api.inject({ method: 'POST', url: '/graphiql' })
  t.equal(ide.statusCode, 405)
  t.equal(ide.headers.allow, 'GET, HEAD')
})

t.test('bodies the endpoint cannot read are 400 in GraphQL shape', async (t) => {
  const { api } = await build(t)
  const post = (payload: string, contentType?: string) => graphql(api, {
    method: 'POST', url: '/graphql', payload, headers: contentType === undefined ? {} : { 'content-type': contentType }
  })
  const cases: Array<[Awaited<ReturnType<typeof post>>, string]> = [
    [await post(JSON.stringify({ query: '{ __typename }', padding: 'x'.repeat(1024 * 1024) }), 'application/json'), 'BODY_TOO_LARGE'],
    [await post('{ "query": ', 'application/json'), 'MALFORMED_JSON'],
    [await post('{ __typename }', 'application/graphql'), 'UNSUPPORTED_CONTENT_TYPE'],
    [await post('{ __typename }', 'text/plain'), 'UNSUPPORTED_CONTENT_TYPE'],
    [await post(JSON.stringify({ query: '{ __typename }' })), 'UNSUPPORTED_CONTENT_TYPE'],
    [await post(JSON.stringify({ variables: {} }), 'application/json'), 'BAD_REQUEST'],
    [await post(JSON.stringify({ query: '' }), 'application/json'), 'BAD_REQUEST'],
    [await post(JSON.stringify({ query: 5 }), 'application/json'), 'VALIDATION_FAILED'],
    [await post(JSON.stringify({ query: { kind: 'Document' } }), 'application/json'), 'VALIDATION_FAILED'],
    [await post(JSON.stringify({ query: '{ __typename }', variables: [1] }), 'application/json'), 'VALIDATION_FAILED'],
    [await post(JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]), 'application/json'), 'VALIDATION_FAILED']
  ]
  for (const [{ status, body }, code] of cases) {
    t.equal(status, 400, code)
    t.same(codesOf(body), [code], body.errors?.[0]?.message ?? code)
    t.notOk('data' in body)
  }
})

t.test('a JSON-encoded AST in place of a query is refused', async (t) => {
  const { api } = await build(t)
  const ast = JSON.stringify({ kind: 'Document', definitions: [{ kind: 'OperationDefinition', operation: 'query', selectionSet: { kind: 'SelectionSet', selections: [{ kind: 'Field', name: { kind: 'Name', value: '__typename' } }] } }] })
  for (const request of [getGraphQL(ast), postGraphQL(ast)]) {
    const { status, body } = await graphql(api, request)
    t.equal(status, 400)
    t.same(body, { errors: [{ message: 'query must be a GraphQL document, not JSON', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] })
  }
})

t.test('content negotiation follows GraphQL over HTTP', async (t) => {
  const { api } = await build(t)
  const ask = async (accept: string | undefined) => {
    const response = await api.inject({ ...getGraphQL('{ __typename }'), headers: accept === undefined ? {} : { accept } })
    return { status: response.statusCode, type: response.headers['content-type'] }
  }
  t.same(await ask(undefined), { status: 200, type: 'application/json; charset=utf-8' })
  t.same(await ask('*/*'), { status: 200, type: 'application/json; charset=utf-8' })
  t.same(await ask('application/json'), { status: 200, type: 'application/json; charset=utf-8' })
  t.same(await ask('application/graphql-response+json'), { status: 200, type: 'application/graphql-response+json; charset=utf-8' })
  t.same(await ask('application/graphql-response+json, application/json;q=0.9'), { status: 200, type: 'application/graphql-response+json; charset=utf-8' })
  t.same(await ask('application/graphql-response+json;q=0.5, application/json'), { status: 200, type: 'application/json; charset=utf-8' })
  t.same(await ask('text/html, */*;q=0.8'), { status: 200, type: 'application/json; charset=utf-8' }, 'a browser gets JSON')
  t.same(await ask('text/html'), { status: 406, type: 'application/json; charset=utf-8' })
  const refused = await api.inject({ ...getGraphQL('{ nope }'), headers: { accept: 'application/graphql-response+json' } })
  t.equal(refused.statusCode, 400)
  t.equal(refused.headers['content-type'], 'application/graphql-response+json; charset=utf-8', 'errors are negotiated too')
})

t.test('list limits out of range are refused before running, naming the argument', async (t) => {
  const { api } = await build(t)
  const cases: Array<[string, Record<string, unknown> | undefined, RegExp]> = [
    ['{ people(limit: 0) { id } }', undefined, /^people\(limit:\) must be an integer from 1 to 1000, not 0$/],
    ['{ people(limit: 1001) { id } }', undefined, /^people\(limit:\)/],
    ['query ($l: Int) { people(limit: $l) { id } }', { l: 5000 }, /^people\(limit:\).* not 5000$/],
    ['{ people { friends(limit: 101) { id } } }', undefined, /^friends\(limit:\) must be an integer from 0 to 100, not 101$/],
    ['query ($l: Int = -1) { people { friends(limit: $l) { id } } }', undefined, /^friends\(limit:\).* not -1$/],
    ['{ people { messages(limit: 101) { id } } }', undefined, /^messages\(limit:\) must be an integer from 1 to 100/],
    ['{ people { messages(limit: 0) { id } } }', undefined, /^messages\(limit:\) must be an integer from 1 to 100, not 0$/]
  ]
  for (const [query, variables, message] of cases) {
    const { status, body } = await graphql(api, getGraphQL(query, variables))
    t.equal(status, 400, query)
    t.match(body.errors?.[0], { message, extensions: { code: 'VALIDATION_FAILED' } })
    t.notOk('data' in body)
  }
  const zero = await graphql(api, getGraphQL('{ people(limit: 1) { friends(limit: 0) { id } } }'))
  t.same(zero.body, { data: { people: [] } }, 'limit 0 is allowed on friends, as the contract says')
})

t.test('queries deeper than 10 levels are 400, fragments included, introspection excluded', async (t) => {
  const { api } = await build(t)
  const nest = (levels: number): string => levels === 1 ? 'name' : `friends(limit: 1) { ${nest(levels - 1)} }`
  const ten = await graphql(api, getGraphQL(`{ people(limit: 1) { ${nest(9)} } }`))
  t.equal(ten.status, 200, '10 levels run')
  const eleven = await graphql(api, getGraphQL(`{ people(limit: 1) { ${nest(10)} } }`))
  t.equal(eleven.status, 400)
  t.same(codesOf(eleven.body), ['QUERY_TOO_DEEP'])
  t.match(eleven.body.errors?.[0]?.message, /^Query depth limit of 10 exceeded, found 11\.$/)
  const viaFragment = await graphql(api, getGraphQL(`query Deep { people(limit: 1) { ...F } } fragment F on Person { ${nest(10)} }`))
  t.equal(viaFragment.status, 400)
  t.same(codesOf(viaFragment.body), ['QUERY_TOO_DEEP'])
  t.match(viaFragment.body.errors?.[0]?.message, /found 11/)
  const introspection = await graphql(api, getGraphQL('{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } }'))
  t.equal(introspection.status, 200, 'GraphiQL can read the schema')
})

t.test('a query over the cost budget is 400 naming its cost, and nothing runs', async (t) => {
  const { api } = await build(t)
  const query = 'mutation { createPerson(input: { name: "Eve" }) { friends(limit: 100) { friends(limit: 100) { friends(limit: 10) { id } } } } }'
  const { status, body } = await graphql(api, postGraphQL(query))
  t.equal(status, 400)
  t.same(body, {
    errors: [{
      message: "the query's worst-case cost is 110200, over the budget of 5000; ask for smaller limits or fewer nested lists",
      extensions: { code: 'QUERY_TOO_COSTLY', cost: 110200, maxCost: 5000 }
    }]
  })
  t.same(await gqlData(api, '{ people { id } }'), { people: [] }, 'the mutation did not run')
  const within = await graphql(api, getGraphQL('{ people(limit: 10) { friends(limit: 4) { name messages(limit: 1) { text } } } }'))
  t.equal(within.status, 200, '10 + 40 + 40 · (1 + 100 for the text) = 4,090 is within the default budget')
})

t.test('the cost budget is an option; costs add up over aliases, fragments and variables', async (t) => {
  const { api } = await build(t, { graphqlMaxCost: 1000 })
  const cost = async (query: string, variables?: Record<string, unknown>) => {
    const { status, body } = await graphql(api, getGraphQL(query, variables))
    return status === 200 ? 'ok' : body.errors?.[0]?.extensions?.cost
  }
  t.equal(await cost('{ people(limit: 1000) { id } }'), 'ok', 'exactly the budget')
  t.equal(await cost('{ people(limit: 1000) { id } more: people(limit: 1) { id } }'), 1001)
  t.equal(await cost('{ people { friends { id } } }'), 1100, 'defaults count: 100 + 100 x 10')
  t.equal(await cost('query ($n: Int!) { people(limit: $n) { ...F } } fragment F on Person { messages(limit: 3) { person { friends(limit: 2) { id } } } }', { n: 101 }), 101 + 303 + 303 + 606, 'a message\'s person costs 1')
  t.equal(await cost('query ($skip: Boolean!) { people(limit: 100) { friends(limit: 100) @skip(if: $skip) { id } } }', { skip: true }), 'ok', 'skipped fields cost nothing')
})

t.test('age, email and address cost 1 each per entry of a list of people; a person read alone or returned by a write is read whole anyway', async (t) => {
  const { api } = await build(t)
  const requested = async (query: string, variables?: Record<string, unknown>) => {
    const { status, body, extensions } = await graphql(api, postGraphQL(query, variables))
    t.equal(status, 200, `${query}: ${JSON.stringify(body.errors ?? [])}`)
    return extensions?.cost
  }
  t.same(await requested('{ people(limit: 100) { id } }'), { requested: 100, charged: 1 })
  t.same(await requested('{ people(limit: 100) { age email } }'), { requested: 300, charged: 3 })
  t.same(await requested('{ people(limit: 10) { ...W } } fragment W on Person { age ... on Person { email a: email } }'), { requested: 40, charged: 1 }, 'through fragments, aliases counted')
  t.same(await requested('query ($s: Boolean!) { people(limit: 100) { age @skip(if: $s) address @include(if: $s) { city } } }', { s: true }), { requested: 200, charged: 2 }, 'skipped ones not at all')
  t.same(await requested('{ peopleConnection(first: 100) { edges { node { address { city } } } } }'), { requested: 200, charged: 2 }, 'a connection\'s entries are its nodes')
  t.same(await requested('{ people(limit: 10) { friends(limit: 10) { age friends(limit: 2) { email } } } }'), { requested: 10 + 100 * 2 + 200 * 2, charged: 7 }, 'per entry, at every depth')
  const { id } = (await api.inject({ method: 'POST', url: '/person', payload: { name: 'Ada', age: 36 } })).json<{ id: string }>()
  t.same(await requested('query ($id: ID!) { person(id: $id) { age email address { city } } }', { id }), { requested: 0, charged: 1 })
  t.same(await requested('query ($id: ID!) { person(id: $id) { messages(limit: 5) { person { age } } } }', { id }), { requested: 10, charged: 1 }, 'a message\'s person: 1, whatever it asks of that person')
  // A write is charged what its REST request is, whatever it returns: it had been 2 for age.
  t.same(await requested('mutation { createPerson(input: { name: "Eve", age: 30 }) { id age email address { country } } }'), { requested: 100, charged: 1 })
  t.same(await requested('mutation ($id: ID!) { updatePerson(id: $id, input: { age: 37 }) { age } }', { id }), { requested: 100, charged: 1 })
})

t.test('the same document costs what its variables make it cost, however often it is sent', async (t) => {
  const { api } = await build(t, { graphqlMaxCost: 1000 })
  const send = async (query: string, variables: Record<string, unknown>) => {
    const { status, body } = await graphql(api, getGraphQL(query, variables))
    return status === 200 ? 'ok' : body.errors?.[0]?.extensions?.cost ?? body.errors?.[0]?.extensions?.code
  }
  const limits = 'query ($id: ID!, $n: Int = 10) { people(limit: 100) { friends(limit: $n) { id } } person(id: $id) { name } }'
  const skip = 'query ($skip: Boolean!) { people(limit: 100) { friends(limit: 100) @skip(if: $skip) { id } } }'
  const sequence: Array<[string, Record<string, unknown>, unknown]> = [
    [limits, { id: 'a' }, 1100],
    [limits, { id: 'b', n: 1 }, 'ok'],
    [limits, { id: 'c', n: 100 }, 10100],
    [limits, { id: 'd', n: 1 }, 'ok'],
    [limits, { id: 'e', n: 101 }, 'VALIDATION_FAILED'],
    [limits, { id: 'f', n: null }, 1100],
    [skip, { skip: true }, 'ok'],
    [skip, { skip: false }, 10100],
    [skip, { skip: true }, 'ok']
  ]
  for (const [query, variables, expected] of sequence) t.equal(await send(query, variables), expected, JSON.stringify(variables))
})

t.test('caps on aliases, directives and tokens', async (t) => {
  const { api } = await build(t)
  const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: __typename`).join(' ')
  const tooManyAliases = await graphql(api, postGraphQL(`{ ${aliases} }`))
  t.equal(tooManyAliases.status, 400)
  t.same(codesOf(tooManyAliases.body), ['TOO_MANY_ALIASES'])
  const directives = Array.from({ length: 16 }, () => '... @include(if: true) @skip(if: false) { __typename }').join(' ')
  const tooManyDirectives = await graphql(api, postGraphQL(`{ ${directives} }`))
  t.equal(tooManyDirectives.status, 400)
  t.same(codesOf(tooManyDirectives.body), ['TOO_MANY_DIRECTIVES'])
  const tokens = await graphql(api, postGraphQL(`{ ${'__typename '.repeat(2000)} }`))
  t.equal(tokens.status, 400)
  t.match(tokens.body.errors?.[0]?.message, /more that 2000 tokens/)
})

t.test('fragments that spread one another twice over are refused for the selections they come to, before any walk spreads them', async (t) => {
  const { api } = await build(t)
  /** `levels` fragments, each spreading the next twice: 2^levels fields in a document of a few hundred characters. */
  const doubling = (levels: number, name: string): string =>
    `query ${name} { people(limit: 1) { ...F0 } } ` +
    Array.from({ length: levels }, (_, i) => `fragment F${i} on Person { ...F${i + 1} ...F${i + 1} }`).join(' ') + ` fragment F${levels} on Person { id }`
  // people, ...F0 and 3 · 2^levels − 2 below it: 11 levels are 6,144 selections, 12 are 12,288.
  const eleven = await graphql(api, postGraphQL(doubling(11, 'Eleven')))
  t.equal(eleven.status, 200, '6,144 selections run')
  // Spread at every use, 60 levels were 2^60 steps of every check that spreads fragments.
  for (const levels of [12, 60, 100]) {
    const started = Date.now()
    const refused = await graphql(api, postGraphQL(doubling(levels, `Doubling${levels}`)))
    t.equal(refused.status, 400, `${levels} levels`)
    t.same(codesOf(refused.body), ['TOO_MANY_SELECTIONS'])
    t.equal(refused.body.errors?.[0]?.message, `operation Doubling${levels} has more than 10,000 fields and fragments once its fragments are spread`)
    t.ok(Date.now() - started < 1000, `${levels} levels refused at once`)
  }
  const overGet = await graphql(api, getGraphQL(doubling(60, 'OverGet')))
  t.same([overGet.status, codesOf(overGet.body)], [400, ['TOO_MANY_SELECTIONS']], 'over GET too')
})

t.test('a field asked for more than 20 times in one selection set, fragments and same-named fields merged, is refused before validation compares them pair by pair', async (t) => {
  const { api } = await build(t)
  const times = (n: number, text: (i: number) => string): string => Array.from({ length: n }, (_, i) => text(i)).join(' ')
  const refusal = (where: string, name: string) => `${where} asks for "${name}" more than 20 times in one selection set, counting its fragments and the selections of same-named fields merged there`
  const sideBySide = (n: number) => `query Side { people(limit: 1) { ${times(n, (i) => `...N${i}`)} } } ${times(n, (i) => `fragment N${i} on Person { name }`)}`
  t.equal((await graphql(api, postGraphQL(sideBySide(20)))).status, 200, 'twenty fragments each asking for name run')
  const side = await graphql(api, postGraphQL(sideBySide(21)))
  t.same([side.status, codesOf(side.body), side.body.errors?.[0]?.message], [400, ['TOO_MANY_REPEATS'], refusal('operation Side', 'name')])

  // Same-named fields merge their selections: 4 × 5 friends are 20 in one set, 4 × 6 are 24.
  const nested = (outer: number, inner: number) => `{ people(limit: 1) { ${times(outer, () => `friends(limit: 1) { ${times(inner, () => 'friends { id }')} }`)} } }`
  t.equal((await graphql(api, postGraphQL(nested(4, 5)))).status, 200, '4 × 5 run')
  // 20 × 20 (400 merged, 76,000 pairs for graphql-js to compare) held the event loop 70 ms, charged 1 request.
  for (const [outer, inner, door] of [[4, 6, getGraphQL], [20, 20, postGraphQL]] as const) {
    const refused = await graphql(api, door(nested(outer, inner)))
    t.same([refused.status, codesOf(refused.body), refused.body.errors?.[0]?.message], [400, ['TOO_MANY_REPEATS'], refusal('the operation', 'friends')], `${outer} × ${inner}`)
  }

  // A fragment spread in a selection and again in a field below it is counted at both.
  const twice = (extra: number) => `{ people(limit: 1) { ...F friends(limit: 1) { ...F ${times(extra, () => 'name')} } } } fragment F on Person { ${times(10, () => 'name')} }`
  t.equal((await graphql(api, postGraphQL(twice(10)))).status, 200)
  t.same(codesOf((await graphql(api, postGraphQL(twice(11)))).body), ['TOO_MANY_REPEATS'])

  // graphql-js compares the fields of fragments nobody spreads, and of those
  // defined twice, all the same: such documents get its refusal first.
  const unused = await graphql(api, postGraphQL(`{ people(limit: 1) { id } } fragment U on Person { ${times(400, () => 'name')} }`))
  t.same([unused.status, codesOf(unused.body), unused.body.errors?.[0]?.message], [400, ['GRAPHQL_VALIDATION_FAILED'], 'Fragment "U" is never used.'])
  const definedTwice = await graphql(api, postGraphQL(`{ people(limit: 1) { ...T } } fragment T on Person { ${times(400, () => 'name')} } fragment T on Person { id }`))
  t.same([definedTwice.status, codesOf(definedTwice.body), definedTwice.body.errors?.[0]?.message], [400, ['GRAPHQL_VALIDATION_FAILED'], 'There can be only one fragment named "T".'])
  // 95 fragments nobody spreads, each spreading the next three under distinct aliases: 11–14 ms of validation, charged 1.
  const chained = await graphql(api, postGraphQL(`{ people(limit: 1) { id } } ${times(95, (i) => `fragment F${i} on Person { a${i}: id ${times(3, (k) => i + k + 1 < 95 ? `...F${i + k + 1}` : '')} }`)}`))
  t.same([chained.status, chained.body.errors?.length, chained.body.errors?.[0]?.message], [400, 95, 'Fragment "F0" is never used.'], 'each unused fragment named, before the rest of validation')
  // Before the rest of validation: ten new such documents, each 18 `friends` of 20 `friends` graphql-js would compare pair by pair.
  const started = Date.now()
  for (let i = 0; i < 10; i++) await graphql(api, postGraphQL(`{ people(limit: ${i + 1}) { id } } fragment U on Person { ${times(18, () => `friends { ${times(20, () => 'friends { id }')} }`)} }`))
  t.ok(Date.now() - started < 200, `ten refused in ${Date.now() - started} ms`)
  const cyclic = await graphql(api, postGraphQL(`{ people(limit: 1) { ...A } } fragment A on Person { friends { ...A } ${times(400, () => 'name')} }`))
  t.same(codesOf(cyclic.body), ['TOO_MANY_REPEATS'], 'a cycle with repeats')
  const cycle = await graphql(api, postGraphQL('{ people(limit: 1) { ...A } } fragment A on Person { friends { ...B } } fragment B on Person { messages { person { ...A } } }'))
  t.same([cycle.status, cycle.body.errors?.[0]?.message], [400, 'Cannot spread fragment "A" within itself via "B".'], 'a cycle alone is validation\'s refusal, not a stack overflow')
})

t.test('in production: no introspection, no GraphiQL, no "Did you mean"', async (t) => {
  const { api, app } = await build(t, { production: true })
  const introspection = await graphql(api, getGraphQL('{ __schema { queryType { name } } }'))
  t.equal(introspection.status, 400)
  t.match(introspection.body.errors?.[0]?.message, /introspection/)
  t.equal((await api.inject({ method: 'GET', url: '/graphiql' })).statusCode, 404)
  // A public path of the contract: answered without credentials, saying why.
  const off = await app.inject({ method: 'GET', url: '/graphiql' })
  t.same([off.statusCode, off.json().code], [404, 'GRAPHIQL_OFF'], 'GraphiQL\'s path, without credentials: 404, not 401')
  const typo = await graphql(api, getGraphQL('{ peple { id } }'))
  t.equal(typo.status, 400)
  t.same(typo.body.errors?.[0]?.message, 'Cannot query field "peple" on type "Query".')
  const { api: dev } = await build(t)
  t.match((await graphql(dev, getGraphQL('{ peple { id } }'))).body.errors?.[0]?.message, /Did you mean "people"\?/, 'outside production, suggestions help')
})

t.test('an unexpected failure is a generic error with the request id: no SQL, paths or stacks', async (t) => {
  const database = await sqliteDatabase(t)
  const { api } = await build(t, { ports: portsOver(createRepositories(database)) })
  await gqlData(api, 'mutation { createPerson(input: { name: "Ada" }) { id } }')
  await sql`drop table message`.execute(database.db)
  const response = await api.inject({ ...getGraphQL('{ people(limit: 2) { name messages(limit: 2) { text } } }'), headers: { 'x-request-id': 'req-42' } })
  t.equal(response.statusCode, 200, 'the request was fine; a field failed, and null bubbled up to data')
  const body = response.json()
  t.same(body, {
    data: null,
    errors: [{
      message: 'something went wrong on our side; quote request id req-42 when reporting it',
      locations: [{ line: 1, column: 27 }],
      path: ['people', 0, 'messages'],
      extensions: { code: 'INTERNAL', requestId: 'req-42' }
    }],
    extensions: { cost: { requested: 406, charged: 5 } }
  })
  t.notMatch(response.body, /message\b.*table|SQLITE|select|\/work|at /i)
})
