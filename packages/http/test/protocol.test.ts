import t from 'tap'
import { createInMemoryPorts } from '@people-service/domain/testing'
import { ADA, build } from './helper.js'

/** The route table docs/API.md and docs/REFERENCE.md document: path → methods offered. */
const DOCUMENTED: Record<string, string[]> = {
  '/people': ['GET', 'HEAD'],
  '/person': ['POST'],
  '/person/:id': ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  '/person/:id/friends': ['GET', 'HEAD'],
  '/person/:id/friends/:friendId': ['PUT', 'DELETE'],
  '/person/:id/messages': ['GET', 'HEAD'],
  '/message': ['POST'],
  '/message/:id': ['GET', 'HEAD'],
  '/health/live': ['GET', 'HEAD'],
  '/health/ready': ['GET', 'HEAD']
}
const ALL = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE'] as const
const concrete = (path: string) => path.replace(':id', '01a1fe78-fcb4-7000-a350-7afc4e244c67').replace(':friendId', '01a1fe78-fcb4-7000-a350-7afc4e244c68')

t.test('every documented path answers 405 with Allow for every method it does not offer', async (t) => {
  const { api } = await build(t)
  for (const [path, offered] of Object.entries(DOCUMENTED)) {
    for (const method of ALL.filter((m) => !offered.includes(m))) {
      const res = await api.inject({ method, url: concrete(path) })
      t.equal(res.statusCode, 405, `${method} ${path}`)
      t.equal(res.headers.allow, offered.join(', '), `Allow of ${path}`)
      if (method !== 'HEAD') t.equal(res.json().statusCode, 405)
    }
  }
  t.equal((await api.inject({ method: 'DELETE', url: '/people' })).headers.allow, 'GET, HEAD', 'the example of docs/API.md')
})

t.test('methods beyond the usual ones, and the operational paths, get 405 with Allow too', async (t) => {
  const { api } = await build(t)
  const cases = [
    ['PROPFIND', '/people', 'GET, HEAD'],
    ['SEARCH', '/people', 'GET, HEAD'],
    ['PURGE', '/person/01a1fe78-fcb4-7000-a350-7afc4e244c67', 'GET, HEAD, POST, PUT, PATCH, DELETE'],
    ['MKCOL', '/message', 'POST'],
    ['DELETE', '/metrics', 'GET, HEAD'],
    ['POST', '/openapi.json', 'GET, HEAD'],
    ['DELETE', '/docs', 'GET, HEAD']
  ] as const
  for (const [method, url, allow] of cases) {
    const res = await api.inject({ method, url })
    t.equal(res.statusCode, 405, `${method} ${url}`)
    t.equal(res.headers.allow, allow, `${method} ${url}: Allow`)
    t.match(res.json(), { statusCode: 405, code: 'METHOD_NOT_ALLOWED' })
  }
  t.equal((await api.inject({ method: 'PROPFIND', url: '/nowhere' })).statusCode, 404, 'an unknown path is 404 whatever the method')
})

t.test('unknown paths are 404 JSON, whatever the method', async (t) => {
  const { api } = await build(t)
  for (const [method, url] of [['GET', '/index.html'], ['GET', '/persons'], ['POST', '/people/1/2/3'], ['DELETE', '/nothing']] as const) {
    const res = await api.inject({ method, url })
    t.equal(res.statusCode, 404, `${method} ${url}`)
    t.match(res.headers['content-type'], /application\/json/)
    t.match(res.json(), { statusCode: 404, error: 'Not Found' })
  }
})

t.test('transport errors are 400 JSON: malformed JSON, wrong content type, too large', async (t) => {
  const { api } = await build(t)
  const cases = [
    { name: 'malformed JSON', payload: '{"name": ', headers: { 'content-type': 'application/json' } },
    { name: 'text/plain', payload: 'name=Ada', headers: { 'content-type': 'text/plain' } },
    { name: 'form encoded', payload: 'name=Ada', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    { name: 'empty JSON body', payload: '', headers: { 'content-type': 'application/json' } },
    { name: 'prototype poisoning', payload: '{"name":"A","__proto__":{"admin":true}}', headers: { 'content-type': 'application/json' } },
    // Decoded as Fastify does, these bytes had become U+FFFD and been stored (201).
    { name: 'bytes that are not UTF-8', payload: Buffer.from([...Buffer.from('{"name":"a'), 0xff, 0xfe, ...Buffer.from('b"}')]), headers: { 'content-type': 'application/json' } },
    { name: 'an overlong NUL', payload: Buffer.from([...Buffer.from('{"name":"a'), 0xc0, 0x80, ...Buffer.from('b"}')]), headers: { 'content-type': 'application/json' } },
    { name: 'a surrogate encoded in UTF-8', payload: Buffer.from([...Buffer.from('{"name":"a'), 0xed, 0xa0, 0x80, ...Buffer.from('b"}')]), headers: { 'content-type': 'application/json' } },
    { name: 'a charset other than UTF-8', payload: '{"name":"Ada"}', headers: { 'content-type': 'application/json; charset=utf-16' } },
    { name: 'body over 1 MiB', payload: JSON.stringify({ name: 'A', email: 'x'.repeat(1024 * 1024) }), headers: { 'content-type': 'application/json' } }
  ]
  for (const { name, payload, headers } of cases) {
    const res = await api.inject({ method: 'POST', url: '/person', payload, headers })
    t.equal(res.statusCode, 400, name)
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', message: String }, name)
  }
  const longQuery = await api.inject(`/people?name=${'a'.repeat(5000)}`)
  t.equal(longQuery.statusCode, 400, 'query string over the limit')
  t.same((await api.inject('/people')).json(), [], 'nothing was created')
  const declared = await api.inject({ method: 'POST', url: '/person', payload: '{"name":"Zoë"}', headers: { 'content-type': 'application/json; charset=UTF-8' } })
  t.same([declared.statusCode, declared.json().name], [201, 'Zoë'], 'charset=UTF-8 is JSON\'s own')
})

t.test('a body is read only as far as its route needs: 405 before the body, 32 KiB for a login, 32 levels of nesting anywhere', async (t) => {
  const { app, as } = await build(t)
  const editor = await as('editor')
  const json = { 'content-type': 'application/json' }
  const nested = (levels: number) => `{"name":"Ada","address":${'['.repeat(levels)}${']'.repeat(levels)}}`

  const started = process.cpuUsage()
  // Each of these bodies takes V8 about 100 ms to parse.
  const unoffered = await app.inject({ method: 'POST', url: '/health/live', headers: json, payload: `${'['.repeat(500_000)}${']'.repeat(500_000)}` })
  t.equal(unoffered.statusCode, 405, 'a megabyte to a method the path does not offer: 405')
  t.equal(unoffered.json().code, 'METHOD_NOT_ALLOWED')
  t.equal(unoffered.headers.allow, 'GET, HEAD', 'with Allow')
  const login = await app.inject({ method: 'POST', url: '/auth/login', headers: json, payload: { username: 'ada', password: 'x'.repeat(40_000) } })
  t.same([login.statusCode, login.json().code], [400, 'BODY_TOO_LARGE'], 'a login body over 32 KiB')
  const deep = await app.inject({ method: 'POST', url: '/person', headers: { ...editor, ...json }, payload: nested(400_000) })
  t.same([deep.statusCode, deep.json().code, deep.json().message], [400, 'MALFORMED_JSON', 'the body nests deeper than 32 levels'])
  const { user, system } = process.cpuUsage(started)
  t.ok((user + system) / 1000 < 50, `none of the three parsed its body: ${((user + system) / 1000).toFixed(0)} ms of CPU for all three`)

  const within = await app.inject({ method: 'POST', url: '/person', headers: { ...editor, ...json }, payload: nested(31) })
  t.equal(within.json().code, 'VALIDATION_FAILED', '31 levels are read, and the schema answers')
  const strings = await app.inject({ method: 'POST', url: '/person', headers: { ...editor, ...json }, payload: { name: '[[[[{{{{'.repeat(25) } })
  t.equal(strings.statusCode, 201, 'brackets inside strings are not nesting')
})

t.test('a body of more than 4,096 values is refused before it is parsed, on every route that reads one', async (t) => {
  const { app, as } = await build(t)
  const editor = await as('editor')
  const headers = { ...editor, 'content-type': 'application/json' }
  /** `{ ...fields, extra: { k0: 0, … } }` with `keys` keys: as many values once the outer object and its commas are counted. */
  const withKeys = (fields: Record<string, unknown>, keys: number) =>
    JSON.stringify({ ...fields, extra: Object.fromEntries(Array.from({ length: keys }, (_, i) => [i.toString(36), 0])) })
  /** The error message of a refusal, REST's or GraphQL's. */
  const messageOf = (body: { message?: string, errors?: Array<{ message?: string }> }) => body.message ?? body.errors?.[0]?.message
  // A megabyte of 125,000 short keys held the event loop 95 ms, and was charged one request.
  for (const [url, fields] of [['/person', { name: 'Ada' }], ['/graphql', { query: '{ people(limit: 1) { id } }' }], ['/message', { personId: 'x', text: 'hi' }]] as const) {
    // Refused by the scan that comes before parsing: parsed, the body would have met the route's schema.
    const many = await app.inject({ method: 'POST', url, headers, payload: withKeys(fields, 120_000) })
    t.same([many.statusCode, messageOf(many.json())], [400, 'the body holds more than 4,096 values'], `${url}: refused`)
  }
  const array = await app.inject({ method: 'POST', url: '/graphql', headers, payload: `{"query":"{ people(limit: 1) { id } }","variables":{"v":[${'0,'.repeat(340_000)}0]}}` })
  t.equal(messageOf(array.json()), 'the body holds more than 4,096 values', 'an array of as many counts the same')
  // 2 objects and 4,093 commas: 4,095 values, read; the schema then names the unknown field.
  const within = await app.inject({ method: 'POST', url: '/person', headers, payload: withKeys({ name: 'Ada' }, 4092) })
  t.same([within.statusCode, within.json().code], [400, 'VALIDATION_FAILED'], 'just within: parsed, and the schema answers')
})

t.test('an empty body sent as JSON is no body: fine where none is needed, refused where one is', async (t) => {
  const { api } = await build(t)
  const headers = { 'content-type': 'application/json' }
  const ada = (await api.inject({ method: 'POST', url: '/person', payload: ADA })).json()
  const bob = (await api.inject({ method: 'POST', url: '/person', payload: { name: 'Bob' } })).json()
  t.equal((await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${bob.id}`, headers, payload: '' })).statusCode, 200)
  t.equal((await api.inject({ method: 'DELETE', url: `/person/${bob.id}`, headers, payload: '' })).statusCode, 200)
  const missing = await api.inject({ method: 'POST', url: '/person', headers, payload: '' })
  t.equal(missing.statusCode, 400)
  t.match(missing.json().message, /body/)
})

t.test('an unexpected failure is a bare 500: no stack, no SQL, the request id to quote', async (t) => {
  const ports = createInMemoryPorts()
  ports.people.findById = async () => { throw new Error('SQLITE_ERROR: near "SELECT": syntax error at /srv/app/src/x.ts:12') }
  const { api } = await build(t, { ports })
  const res = await api.inject({ url: '/person/01a1fe78-fcb4-7000-a350-7afc4e244c67', headers: { 'x-request-id': 'trace-me-1' } })
  t.equal(res.statusCode, 500)
  t.same(Object.keys(res.json()).sort(), ['code', 'error', 'message', 'requestId', 'statusCode'])
  t.equal(res.json().requestId, 'trace-me-1')
  t.notMatch(res.body, /SQLITE|SELECT|\.ts|at \//)
})

t.test('X-Request-Id is echoed when sensible and generated otherwise', async (t) => {
  const { api } = await build(t)
  t.equal((await api.inject({ url: '/people', headers: { 'x-request-id': 'abc-123' } })).headers['x-request-id'], 'abc-123')
  const generated = (await api.inject('/people')).headers['x-request-id']
  t.match(generated, /^[0-9a-f-]{36}$/)
  const hostile = (await api.inject({ url: '/nowhere', headers: { 'x-request-id': 'a b\u0007' + 'x'.repeat(300) } })).headers['x-request-id']
  t.match(hostile, /^[0-9a-f-]{36}$/, 'replaced, and on 404s too')
})

t.test('HEAD on a list answers like GET without a body', async (t) => {
  const { api } = await build(t)
  await api.inject({ method: 'POST', url: '/person', payload: ADA })
  const res = await api.inject({ method: 'HEAD', url: '/people' })
  t.equal(res.statusCode, 200)
  t.equal(res.body, '')
})

t.test('health: live always, ready when the database answers', async (t) => {
  const { api } = await build(t)
  t.same((await api.inject('/health/live')).json(), { status: 'ok' })
  t.same((await api.inject('/health/ready')).json(), { status: 'ok' })
  const down = await build(t, { ready: async () => { throw new Error('connection refused') } })
  const res = await down.api.inject('/health/ready')
  t.equal(res.statusCode, 503)
  t.same(res.json(), { status: 'unavailable' })
})

t.test('a database that is unavailable is 503 JSON, not 500', async (t) => {
  const ports = createInMemoryPorts()
  const { DomainError } = await import('@people-service/domain')
  ports.people.list = async () => { throw new DomainError('DEPENDENCY_UNAVAILABLE', 'the database is unavailable, try again shortly') }
  const { api } = await build(t, { ports })
  const res = await api.inject('/people')
  t.equal(res.statusCode, 503)
  t.equal(res.json().code, 'DEPENDENCY_UNAVAILABLE')
})
