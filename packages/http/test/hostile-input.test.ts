import fc from 'fast-check'
import t from 'tap'
import { useFastCheckSeed } from './fast-check-seed.js'
import { ADA, build } from './helper.js'

/*
 * Thousands of generated hostile requests through app.inject. Whatever comes
 * in: never a 5xx, always a JSON error body with the status it is sent with,
 * never a stack, SQL or file path, and a rejected request changes nothing.
 */

t.comment(`fast-check seed ${useFastCheckSeed()}`)

const LEAKS = /\bat \S+ \(|\.ts:\d+|\.js:\d+|node_modules|SQLITE_|near "[^"]*": syntax error|select .* from|insert into|\/work\/|\/srv\//i

const hostileKey = fc.oneof(
  fc.constantFrom('__proto__', 'constructor', 'prototype', 'name', 'age', 'email', 'address', 'id', 'createdAt', 'senderId', 'role', 'personId', 'text'),
  fc.string({ maxLength: 12 })
)
const hostileValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 300 }),
    fc.string({ unit: 'grapheme', maxLength: 50 }),
    fc.integer(),
    fc.double(),
    fc.constantFrom(Number.MAX_SAFE_INTEGER, -1, 1e308, 151, 0, 36),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 5 })
  )
})).value
const hostileBody = fc.oneof(
  fc.dictionary(hostileKey, hostileValue, { maxKeys: 8 }),
  hostileValue
)

interface Answer { statusCode: number, body: string, headers: Record<string, unknown> }

const checkAnswer = (answer: Answer, graphql = false): void => {
  if (answer.statusCode >= 500) throw new Error(`5xx: ${answer.statusCode} ${answer.body}`)
  const parsed = JSON.parse(answer.body) as { errors?: unknown }
  if (graphql && answer.statusCode >= 400 && Array.isArray(parsed.errors)) {
    // GraphQL over HTTP: a request that cannot run answers `errors`.
  } else if (answer.statusCode >= 400) {
    const body = JSON.parse(answer.body) as { statusCode?: number, message?: string }
    if (body.statusCode !== answer.statusCode) throw new Error(`body status ${body.statusCode} for ${answer.statusCode}`)
    if (typeof body.message !== 'string') throw new Error(`no message: ${answer.body}`)
  }
  if (LEAKS.test(answer.body)) throw new Error(`leak: ${answer.body}`)
}

// Rate limits off: thousands of requests from one caller are the point here.
const NO_LIMITS = { access: { limits: { max: 0 } } }

t.test('random JSON bodies on every write route', async (t) => {
  const { api } = await build(t, NO_LIMITS)
  const ada = (await api.inject({ method: 'POST', url: '/person', payload: ADA })).json<{ id: string }>()
  const snapshot = async () => JSON.stringify([
    (await api.inject('/people?limit=1000')).json(),
    (await api.inject(`/person/${ada.id}`)).json(),
    (await api.inject(`/person/${ada.id}/messages`)).json()
  ])
  const routes = [
    ['POST', '/person'], ['PUT', `/person/${ada.id}`], ['PATCH', `/person/${ada.id}`], ['POST', `/person/${ada.id}`], ['POST', '/message']
  ] as const
  let rejected = 0
  await fc.assert(fc.asyncProperty(fc.constantFrom(...routes), hostileBody, async ([method, url], body) => {
    const before = await snapshot()
    const answer = await api.inject({ method, url, payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } })
    checkAnswer(answer)
    if (answer.statusCode >= 400) {
      rejected++
      if (await snapshot() !== before) throw new Error(`a rejected ${method} ${url} changed state: ${JSON.stringify(body)}`)
    } else if (method === 'POST' && url === '/person') {
      // An accepted create is undone so the snapshot stays comparable.
      await api.inject({ method: 'DELETE', url: `/person/${answer.json<{ id: string }>().id}` })
    }
  }), { numRuns: 1500 })
  t.ok(rejected > 1000, `${rejected} of 1500 generated bodies were rejected, all cleanly`)
  t.equal(Object.prototype.hasOwnProperty.call({}, 'polluted'), false)
  t.equal(({} as Record<string, unknown>).admin, undefined, 'no prototype was polluted')
})

t.test('random paths, query strings and headers', async (t) => {
  const { api } = await build(t, NO_LIMITS)
  const segment = fc.oneof(fc.constantFrom('people', 'person', 'message', 'friends', 'messages', 'graphql', '..', '%2e%2e', '%00', ''), fc.webSegment(), fc.string({ maxLength: 20 }).map(encodeURIComponent))
  const query = fc.dictionary(fc.constantFrom('limit', 'cursor', 'name', 'query', 'variables', 'x'), fc.oneof(fc.string({ maxLength: 40 }), fc.integer().map(String)), { maxKeys: 3 })
  const header = fc.dictionary(fc.constantFrom('x-request-id', 'accept', 'content-type', 'x-api-key', 'authorization', 'origin'), fc.string({ maxLength: 60 }).filter((v) => /^[\t\x20-\x7e]*$/.test(v)), { maxKeys: 3 })
  await fc.assert(fc.asyncProperty(
    fc.constantFrom('GET', 'DELETE', 'HEAD', 'OPTIONS', 'PUT'), fc.array(segment, { minLength: 1, maxLength: 4 }), query, header,
    async (method, segments, params, headers) => {
      const url = `/${segments.join('/')}?${new URLSearchParams(params).toString()}`
      const answer = await api.inject({ method, url, headers })
      // Dot segments (`..`, `%2e%2e`) normalise the way a URL parser does: `/%2e%2e/graphql` is /graphql.
      if (method !== 'HEAD') checkAnswer(answer, new URL(`http://localhost${url}`).pathname === '/graphql')
      else if (answer.statusCode >= 500) throw new Error(`5xx on HEAD ${url}`)
    }
  ), { numRuns: 1500 })
  t.pass('1500 generated requests, none failed on our side')
})

t.test('random GraphQL documents', async (t) => {
  const { api } = await build(t, NO_LIMITS)
  const field = fc.constantFrom('id', 'name', 'age', 'email', 'address { city }', 'friends { name }', 'friends(limit: 3) { id }', 'messages { text }', 'nope', '__typename')
  const selection = fc.array(fc.oneof(field, fc.tuple(fc.constantFrom('a', 'b', 'c'), field).map(([alias, f]) => `${alias}: ${f}`)), { minLength: 1, maxLength: 5 }).map((fields) => fields.join(' '))
  const nested = (depth: number): fc.Arbitrary<string> => depth === 0
    ? selection
    : fc.tuple(selection, nested(depth - 1)).map(([s, inner]) => `${s} friends(limit: 2) { ${inner} }`)
  const document = fc.oneof(
    fc.tuple(fc.integer({ min: 0, max: 12 }), fc.integer({ min: -5, max: 2000 })).chain(([depth, limit]) => nested(Math.min(depth, 12)).map((s) => `{ people(limit: ${limit}) { ${s} } }`)),
    selection.map((s) => `query Q($id: ID!) { person(id: $id) { ...F } } fragment F on Person { ${s} }`),
    fc.string({ maxLength: 200 })
  )
  const variables = fc.oneof(fc.constant(undefined), fc.dictionary(fc.constantFrom('id', 'limit'), hostileValue, { maxKeys: 2 }))
  await fc.assert(fc.asyncProperty(document, variables, fc.boolean(), async (query, vars, overGet) => {
    const answer = overGet
      ? await api.inject({ method: 'GET', url: '/graphql', query: { query, ...(vars === undefined ? {} : { variables: JSON.stringify(vars) }) } })
      : await api.inject({ method: 'POST', url: '/graphql', payload: { query, ...(vars === undefined ? {} : { variables: vars }) } })
    if (answer.statusCode >= 500) throw new Error(`5xx: ${answer.body}`)
    if (LEAKS.test(answer.body)) throw new Error(`leak: ${answer.body}`)
    JSON.parse(answer.body)
  }), { numRuns: 1000 })
  t.pass('1000 generated GraphQL requests, none failed on our side')
})
