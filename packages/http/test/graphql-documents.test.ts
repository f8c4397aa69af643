import { buildSchema, getOperationAST, GraphQLError, parse, specifiedRules, validate } from 'graphql'
import t from 'tap'
import { DocumentCache, REMEMBERED, type Remembering } from '../src/graphql/documents.js'
import { GraphQLRequestError } from '../src/graphql/error-format.js'
import { documentRules, GRAPHQL_LIMITS } from '../src/graphql/limits.js'
import { QueryCompiler } from '../src/graphql/plan.js'
import { schema as typeDefs } from '../src/graphql/schema.js'
import { RESPONSE_LIMITS } from '../src/response-size.js'
import { build, graphql, postGraphQL } from './helper.js'

/*
 * The parse stage remembers documents by their text (documents.ts): valid
 * ones with their syntax tree, within a budget of heap; refused ones with
 * only their refusal and the names of their operations. These tests hold it
 * to the answers graphql-js gives, and to what it keeps and forgets.
 */

const schema = buildSchema(typeDefs)
const rules = documentRules(false)
const cacheOf = (remembered = REMEMBERED) => new DocumentCache({ schema, maxCost: GRAPHQL_LIMITS.defaultMaxCost, maxResponseBytes: RESPONSE_LIMITS.defaultMaxBytes, jit: new QueryCompiler(1), sqlPlan: false, validationRules: rules }, remembered)

type Answer = 'runs' | { status: number, errors: unknown[] }

const refusalOf = (error: unknown): Answer => {
  if (!(error instanceof GraphQLRequestError)) throw error
  return { status: error.statusCode, errors: error.errors.map((e) => e.toJSON()) }
}

/** What the cache answers a request for `name` in `source`. */
const answerOf = (cache: DocumentCache, source: string, name?: string): Answer => {
  try {
    cache.parse(source).operation(name)
    return 'runs'
  } catch (error) {
    return refusalOf(error)
  }
}

/** What graphql-js itself says of the same request: the name is checked first, then validation. */
const graphqlJsAnswerOf = (source: string, name?: string): Answer => {
  let document
  try {
    document = parse(source, { maxTokens: GRAPHQL_LIMITS.maxTokens })
  } catch (error) {
    if (!(error instanceof GraphQLError)) throw error
    return { status: 400, errors: [error.toJSON()] }
  }
  if (!getOperationAST(document, name)) {
    const message = name === undefined
      ? 'the document has several operations: say which to run with operationName'
      : `the document has no operation named ${JSON.stringify(name)}`
    return { status: 400, errors: [{ message, extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }
  }
  const errors = validate(schema, document, [...specifiedRules, ...rules])
  return errors.length === 0 ? 'runs' : { status: 400, errors: errors.map((e) => e.toJSON()) }
}

/** A valid document of `length` characters, told apart by `tag`: a short query and a comment. */
const validOf = (tag: string, length = 0) => {
  const query = `query Q${tag} { people(limit: 1) { id } }`
  return length > query.length ? `${query}\n#${'x'.repeat(length - query.length - 2)}` : query
}

t.test('a refused document is answered as graphql-js decides, the first time and every time after, with every location', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    // Syntax errors, early and late.
    ['{ people { name }', undefined],
    [`query Late { ${'__typename '.repeat(50)}`, undefined],
    // Validation errors across lines, with their locations.
    ['query A {\n  nope\n  people { nada }\n}\nquery B { person(id: 1) { name } }', 'A'],
    ['query A {\n  nope\n  people { nada }\n}\nquery B { person(id: 1) { name } }', 'B'],
    // The name is checked first: no name among several, a name that is not there.
    ['query A {\n  nope\n  people { nada }\n}\nquery B { person(id: 1) { name } }', undefined],
    ['query A {\n  nope\n  people { nada }\n}\nquery B { person(id: 1) { name } }', 'C'],
    // An anonymous operation is selected by no name only, and only alone.
    ['{ nope }', undefined],
    ['{ nope }', 'nope'],
    ['{ nope } query A { nope }', undefined],
    ['{ nope } query A { nope }', 'A'],
    // No operation at all: no name selects anything.
    ['fragment F on Query { nope }', undefined],
    ['fragment F on Query { nope }', 'F'],
    // A name twice, and a hundred errors and more: graphql-js stops at 100.
    ['query A { nope } query A { people { id } }', 'A'],
    [Array.from({ length: 120 }, (_, i) => `query Q${i} { nope${i} }`).join('\n'), 'Q7'],
    // Our own rules, run with graphql-js' own.
    ['{ people { friends { friends { friends { friends { friends { friends { friends { friends { friends { friends { id } } } } } } } } } } } }', undefined]
  ]
  const cache = cacheOf()
  for (const time of ['the first time', 'remembered']) {
    for (const [source, name] of cases) {
      const expected = graphqlJsAnswerOf(source, name)
      t.not(expected, 'runs')
      t.same(answerOf(cache, source, name), expected, `${source.slice(0, 40)} (${name}): ${time}`)
    }
  }
  // Refused before graphql-js would compare that many same-named fields (limits.ts, repeatedFields).
  const repeated = `query A { ${'__typename '.repeat(1985)}}`
  for (const time of ['the first time', 'remembered']) {
    t.same(answerOf(cache, repeated, 'A'), {
      status: 400,
      errors: [{ message: 'operation A asks for "__typename" more than 20 times in one selection set, counting its fragments and the selections of same-named fields merged there', extensions: { code: 'TOO_MANY_REPEATS' } }]
    }, `1,985 __typename: ${time}`)
  }
  const json = '{"kind":"Document","definitions":[]}'
  for (const time of ['the first time', 'remembered']) {
    t.same(answerOf(cache, json), { status: 400, errors: [{ message: 'query must be a GraphQL document, not JSON', extensions: { code: 'GRAPHQL_PARSE_FAILED' } }] }, `JSON: ${time}`)
  }
})

t.test('over HTTP, a refused document gets the same body the first time and once remembered', async (t) => {
  const { api } = await build(t)
  const query = 'query A {\n  nope\n  people { nada }\n}'
  const expected = {
    errors: [
      { message: 'Cannot query field "nope" on type "Query".', locations: [{ line: 2, column: 3 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
      { message: 'Cannot query field "nada" on type "Person". Did you mean "name"?', locations: [{ line: 3, column: 12 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }
    ]
  }
  for (const time of ['first', 'second', 'third']) {
    const { status, body } = await graphql(api, postGraphQL(query, undefined, 'A'))
    t.equal(status, 400)
    t.same(body, expected, `the ${time} time`)
  }
  const named = await graphql(api, postGraphQL(query, undefined, 'B'))
  t.same(named.body, { errors: [{ message: 'the document has no operation named "B"', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] }, 'a name the document does not have is heard first')
})

t.test('a client\'s documents are remembered, up to 1,024, the least recently used forgotten first', async (t) => {
  const cache = cacheOf()
  const documents = Array.from({ length: REMEMBERED.valid.documents }, (_, i) => validOf(String(i)))
  const parsed = documents.map((source) => cache.parse(source))
  t.ok(documents.every((source, i) => cache.parse(source) === parsed[i]), 'each is read once')
  t.equal(cache.parse(documents[0]!).operation(undefined), cache.parse(documents[0]!).operation(undefined), 'and its operation prepared once')

  cache.parse(validOf('new'))
  t.equal(cache.parse(documents[0]!), parsed[0], 'the first was used last: kept')
  t.not(cache.parse(documents[1]!), parsed[1], 'the least recently used is read again')
})

t.test('refused documents, however many, never push a client\'s documents out', async (t) => {
  const cache = cacheOf()
  const documents = Array.from({ length: 50 }, (_, i) => validOf(String(i)))
  const parsed = documents.map((source) => cache.parse(source))
  for (let i = 0; i < 3 * REMEMBERED.refused.documents; i++) answerOf(cache, `query R${i} { nope }`)
  for (let i = 0; i < 30; i++) answerOf(cache, `query R${i} { ${'__typename '.repeat(1985)}}`)
  t.ok(documents.every((source, i) => cache.parse(source) === parsed[i]), 'all still remembered')
})

t.test('long valid documents are remembered within the heap budget, the least recently used forgotten first', async (t) => {
  const cache = cacheOf()
  // Some 6 MB each as remembered: three fit in the budget of 20, not four.
  const [a, b, c, d] = ['A', 'B', 'C', 'D'].map((tag) => validOf(tag, GRAPHQL_LIMITS.maxLength - 500))
  const first = [a!, b!, c!].map((source) => cache.parse(source))
  t.ok([a!, b!, c!].every((source, i) => cache.parse(source) === first[i]), 'three are remembered')
  cache.parse(a!)
  const fourth = cache.parse(d!)
  t.equal(cache.parse(a!), first[0], 'the one used last is kept')
  t.equal(cache.parse(c!), first[2])
  t.equal(cache.parse(d!), fourth, 'the new one is kept')
  t.not(cache.parse(b!), first[1], 'the least recently used is forgotten, and read again when it comes')
})

t.test('a document that would take more than the whole budget is answered all the same, read each time, and pushes nothing out', async (t) => {
  const small: Remembering = { documents: 1024, bytes: 100_000 }
  const cache = cacheOf({ valid: small, refused: small })
  const short = validOf('short')
  const shortParsed = cache.parse(short)
  const refusedShort = 'query S { nope }'
  const refusedShortParsed = cache.parse(refusedShort)

  const long = validOf('long', 2000)
  const once = cache.parse(long)
  t.equal(once.operation(undefined).kind, 'query', 'the long document runs')
  t.equal(once.operation(undefined).name, 'Qlong')
  const again = cache.parse(long)
  t.not(again, once, 'read again: not remembered')
  t.equal(again.operation(undefined).name, 'Qlong', 'and runs again')

  const refusedLong = Array.from({ length: 120 }, (_, i) => `query Q${i} { nope${i} }`).join('\n')
  const expected = graphqlJsAnswerOf(refusedLong, 'Q1')
  t.same(answerOf(cache, refusedLong, 'Q1'), expected, 'a refused one too large to remember is refused as graphql-js says')
  t.not(cache.parse(refusedLong), cache.parse(refusedLong), 'read again each time')
  t.same(answerOf(cache, refusedLong, 'Q1'), expected, 'and refused the same')

  t.equal(cache.parse(short), shortParsed, 'the short valid document is still remembered')
  t.equal(cache.parse(refusedShort), refusedShortParsed, 'and the short refused one')
})
