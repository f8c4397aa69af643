import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { POLICY, ROUTE_OPERATIONS, type Operation } from '@people-service/http'
import addFormats from 'ajv-formats'
import { OpenAPIBackend, type Document as BackendDocument } from 'openapi-backend'
import openapiTS, { astToString } from 'openapi-typescript'
import t from 'tap'
import ts from 'typescript'
import { build, PASSWORD, realServer } from './helper.js'

/*
 * The served document, held to what the service really does. One server and
 * one fetch of the document for the whole file: the lint, the generated client
 * and the validator each run once per test run.
 */

interface Operations { [method: string]: OperationDoc }
interface OperationDoc {
  operationId?: string
  tags?: string[]
  summary?: string
  security?: Array<Record<string, string[]>>
  parameters?: Array<{ in: string, name: string, required?: boolean }>
  responses: Record<string, ResponseDoc>
}
interface ResponseDoc {
  description: string
  headers?: Record<string, { schema: { type: string } }>
  content?: Record<string, { schema: unknown, example?: unknown }>
}
interface Document {
  openapi: string
  servers?: Array<{ url: string }>
  tags?: Array<{ name: string, description?: string }>
  paths: Record<string, Operations>
  components: { securitySchemes?: Record<string, { type: string, in?: string, name?: string, scheme?: string }> }
}

const METRICS_TOKEN = 'a-scraper-token-of-some-length'
const server = await realServer(t, { access: { metricsToken: METRICS_TOKEN } })
const documentResponse = await fetch(`${server.url}/openapi.json`)
const document = await documentResponse.json() as Document

const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
  Object.entries(methods).map(([method, operation]) => ({ path, method, operation, name: `${method.toUpperCase()} ${path}` })))

/** The policy row a documented path answers to, as the access hook finds it. */
const operationOfPath = (method: string, path: string): Operation => {
  const url = path.replace(/\{(\w+)\}/g, ':$1')
  const byConfig: Record<string, Operation> = {
    'GET /people': 'people.list',
    'GET /person/:id': 'person.get',
    'POST /person': 'person.create',
    'PUT /person/:id': 'person.update',
    'PATCH /person/:id': 'person.update',
    'POST /person/:id': 'person.update',
    'DELETE /person/:id': 'person.delete',
    'GET /person/:id/friends': 'friends.list',
    'PUT /person/:id/friends/:friendId': 'friends.add',
    'DELETE /person/:id/friends/:friendId': 'friends.remove',
    'GET /person/:id/messages': 'messages.list',
    'GET /message/:id': 'message.get',
    'POST /message': 'message.send',
    'POST /auth/login': 'auth.login',
    'GET /': 'root',
    'GET /favicon.ico': 'favicon',
    'GET /health/live': 'health.live',
    'GET /health/ready': 'health.ready',
    'POST /users': 'users.create',
    'GET /users': 'users.list',
    'GET /users/me': 'users.me',
    'PATCH /users/:id': 'users.update',
    'DELETE /users/:id': 'users.delete',
    'POST /auth/password': 'auth.password',
    'POST /api-keys': 'apiKeys.create',
    'GET /api-keys': 'apiKeys.list',
    'DELETE /api-keys/:id': 'apiKeys.revoke',
    'GET /api-keys/:id/usage': 'apiKeys.usage',
    'GET /events': 'events.list',
    'POST /webhooks': 'webhooks.create',
    'GET /webhooks': 'webhooks.list',
    'GET /webhooks/:id': 'webhooks.get',
    'PATCH /webhooks/:id': 'webhooks.update',
    'DELETE /webhooks/:id': 'webhooks.delete',
    'GET /webhooks/:id/deliveries': 'webhooks.deliveries',
    'POST /webhooks/:id/deliveries/:deliveryId/retry': 'webhooks.retry'
  }
  const operation = byConfig[`${method.toUpperCase()} ${url}`] ?? ROUTE_OPERATIONS[url]
  if (operation === undefined) throw new Error(`no policy row known for ${method} ${path}: add it here`)
  return operation
}

t.test('Redocly\'s recommended rules find no error, no warning, and no example that breaks its schema', async (t) => {
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: `${server.url}/openapi.json`, config })
  const describe = (p: (typeof problems)[number]) => `${p.ruleId}: ${p.message} at ${p.location.map((l) => l.pointer).join(', ')}`
  t.same(problems.filter((p) => p.severity === 'error').map(describe), [], 'no error')
  t.same(problems.filter((p) => p.ruleId.includes('example')).map(describe), [], 'every example matches its schema')
  t.same(problems.filter((p) => p.severity === 'warn').map(describe), [], 'no warning either')
})

t.test('servers, security schemes and tags are declared', async (t) => {
  t.same(document.servers, [{ url: '/', description: 'the server this document was fetched from' }])
  t.match(document.components.securitySchemes, {
    apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
    bearerAuth: { type: 'http', scheme: 'bearer' },
    metricsToken: { type: 'http', scheme: 'bearer' }
  })
  const declared = new Set(document.tags?.map((tag) => tag.name))
  for (const tag of document.tags ?? []) t.ok(tag.description, `tag ${tag.name} is described`)
  for (const { name, operation } of operations) {
    t.ok(operation.tags?.length, `${name} has a tag`)
    for (const tag of operation.tags ?? []) t.ok(declared.has(tag), `${name}: tag ${tag} is declared`)
  }
})

t.test('every operation has a unique operationId, a summary, and the security of its policy row', async (t) => {
  const ids = operations.map(({ operation }) => operation.operationId)
  t.notOk(ids.includes(undefined), 'every operation has an operationId')
  t.equal(new Set(ids).size, ids.length, 'operationIds are unique')
  for (const { name, method, path, operation } of operations) {
    t.ok(operation.summary, `${name} has a summary`)
    const requirement = POLICY[operationOfPath(method, path)]
    if (requirement.access === 'public') {
      t.same(operation.security, [], `${name} is public`)
      continue
    }
    const scopes = 'scope' in requirement ? [requirement.scope] : []
    const schemes = (operation.security ?? []).map((alternative) => Object.entries(alternative)).flat()
    t.same(schemes.find(([scheme]) => scheme === 'bearerAuth'), ['bearerAuth', scopes], `${name}: an access token with ${scopes.join(' ') || 'any scope'}`)
    const accountsOnly = 'accounts' in requirement && requirement.accounts
    t.same(schemes.find(([scheme]) => scheme === 'apiKey'), accountsOnly ? undefined : ['apiKey', scopes], `${name}: ${accountsOnly ? 'no' : 'an'} API key`)
    const metricsToken = 'metricsToken' in requirement && requirement.metricsToken
    t.same(schemes.find(([scheme]) => scheme === 'metricsToken'), metricsToken ? ['metricsToken', []] : undefined, `${name}: ${metricsToken ? 'the' : 'no'} metrics token`)
  }
})

t.test('every operation lists the errors its policy implies, with examples and the headers they carry', async (t) => {
  for (const { name, method, path, operation } of operations) {
    const requirement = POLICY[operationOfPath(method, path)]
    const statuses = Object.keys(operation.responses)
    t.ok(statuses.some((s) => s.startsWith('2')), `${name} has a success response`)
    t.notOk(statuses.includes('default'), `${name}: statuses, not "default"`)
    // 400: any request may send a query string too long or an Expect the server cannot meet.
    for (const status of ['400', '500', '503']) t.ok(statuses.includes(status), `${name} declares ${status}`)
    if (requirement.access === 'caller') {
      for (const status of ['401', '429']) t.ok(statuses.includes(status), `${name} declares ${status}`)
      if ('scope' in requirement || 'accounts' in requirement) t.ok(statuses.includes('403'), `${name} declares 403`)
    }
    if (operation.parameters?.some((p) => p.in === 'path')) t.ok(statuses.includes('404'), `${name} declares 404: its path names something`)
    for (const [status, response] of Object.entries(operation.responses)) {
      const headers = Object.keys(response.headers ?? {})
      t.ok(headers.includes('X-Request-Id'), `${name} ${status}: X-Request-Id`)
      if (requirement.access === 'caller') {
        for (const header of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) t.ok(headers.includes(header), `${name} ${status}: ${header}`)
        t.ok(headers.includes('Cache-Control'), `${name} ${status}: Cache-Control (no-store on every answer to an authenticated request)`)
      }
      if (status === '429') t.ok(headers.includes('Retry-After'), `${name} 429: Retry-After`)
      if (status === '401') t.ok(headers.includes('WWW-Authenticate'), `${name} 401: WWW-Authenticate`)
      t.ok(response.description && response.description !== 'Default Response', `${name} ${status}: described`)
      const media = Object.entries(response.content ?? {})
      t.ok(media.length > 0 || status === '304', `${name} ${status}: has a body`)
      for (const [type, { example }] of media) t.not(example, undefined, `${name} ${status} ${type}: has an example`)
    }
  }
})

t.test('list limits are optional; paths and bodies say what is required', async (t) => {
  for (const path of ['/people', '/person/{id}/friends', '/person/{id}/messages']) {
    const limit = document.paths[path]?.get?.parameters?.find((p) => p.name === 'limit')
    t.equal(limit?.required, false, `${path}: limit is optional`)
  }
})

t.test('headers the service sends are documented where it sends them', async (t) => {
  t.ok(document.paths['/person']?.post?.responses['201']?.headers?.Location, 'POST /person 201: Location')
  t.ok(document.paths['/message']?.post?.responses['201']?.headers?.Location, 'POST /message 201: Location')
  t.ok(document.paths['/people']?.get?.responses['200']?.headers?.Link, 'GET /people 200: Link')
  t.ok(document.paths['/person/{id}/messages']?.get?.responses['200']?.headers?.Link, 'GET /person/{id}/messages 200: Link')
  t.ok(document.paths['/graphql']?.get?.responses['405']?.headers?.Allow, 'GET /graphql 405: Allow')
  t.ok(document.paths['/users']?.get?.responses['200']?.headers?.Link, 'GET /users 200: Link')
  for (const [path, method, status] of [['/person/{id}', 'get', '200'], ['/person/{id}', 'get', '304'], ['/person/{id}', 'patch', '200'], ['/person', 'post', '201']] as const) {
    t.ok(document.paths[path]?.[method]?.responses[status]?.headers?.ETag, `${method.toUpperCase()} ${path} ${status}: ETag`)
  }
  for (const path of ['/person', '/message']) {
    t.ok(document.paths[path]?.post?.responses['201']?.headers?.['Idempotent-Replayed'], `POST ${path} 201: Idempotent-Replayed`)
    t.ok(document.paths[path]?.post?.responses['409']?.headers?.['Retry-After'], `POST ${path} 409: Retry-After`)
  }
})

t.test('a route that does not document itself cannot be registered', async (t) => {
  const documentedResponse = { description: 'ok', examples: [{}], type: 'object' }
  const schema = { operationId: 'describeSomething', summary: 'Something', tags: ['people'], response: { 200: documentedResponse } }
  await build(t, {
    extend: (app) => {
      const config = { operation: 'person.get' as const }
      t.throws(() => app.get('/person/:id/a', { config }, async () => ({})), /GET \/person\/:id\/a is not documented: no schema/)
      t.throws(() => app.get('/person/:id/b', { config, schema: { ...schema, operationId: undefined } }, async () => ({})), /no operationId/)
      t.throws(() => app.get('/person/:id/c', { config, schema: { ...schema, operationId: 'getPerson' } }, async () => ({})), /has the operationId 'getPerson' of GET \/person\/:id/)
      t.throws(() => app.get('/person/:id/d', { config, schema: { ...schema, tags: ['misc'] } }, async () => ({})), /the tag 'misc' is not declared/)
      t.throws(() => app.get('/person/:id/e', { config, schema: { ...schema, response: { 200: { type: 'object' } } } }, async () => ({})), /response 200 has no description/)
      t.throws(() => app.get('/person/:id/f', { config, schema: { ...schema, response: { 200: { type: 'object', description: 'ok' } } } }, async () => ({})), /response 200 has no example/)
      t.throws(() => app.get('/person/:id/g', { config, schema: { ...schema, response: { 404: documentedResponse } } }, async () => ({})), /no success \(2xx\) response/)
      t.doesNotThrow(() => app.get('/person/:id/h', { config, schema }, async () => ({})))
      t.doesNotThrow(() => app.get('/person/:id/i', { config, schema: { ...schema, operationId: 'notModified', response: { ...schema.response, 304: { type: 'null', description: 'Not modified' } } } }, async () => ({})))
    }
  })
})

// --- real requests through a validator ----------------------------------------------

// quick: openapi-backend checks a definition against OpenAPI 3.0 only; the
// Redocly test above checks this one against 3.1.
const validator = new OpenAPIBackend({
  definition: structuredClone(document) as unknown as BackendDocument,
  quick: true,
  strict: false,
  validate: true,
  customizeAjv: (ajv) => {
    addFormats.default(ajv as never, ['date-time'])
    return ajv
  }
})

/** Headers a client may act on: wherever the service sends one, the document must say so. */
const WATCHED_HEADERS = [
  'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'www-authenticate',
  'allow', 'location', 'link', 'etag', 'idempotent-replayed', 'cache-control'
]

interface Exchange { method: string, path: string, status: number, headers: Headers, body: unknown, contentType: string }

/** The documented operation a request is for, as `METHOD /path/{template}`. */
const operationNameOf = (method: string, path: string): string | undefined => {
  const operation = validator.matchOperation({ method, path: path.split('?')[0]!, headers: {} })
  return operation === undefined ? undefined : `${method} ${operation.path}`
}

/** What in one exchange breaks the document; empty when it conforms. */
const violations = (exchange: Exchange): string[] => {
  const { method, path, status, headers, body, contentType } = exchange
  const operation = validator.matchOperation({ method, path: path.split('?')[0]!, headers: {} })
  if (operation === undefined) return [`${method} ${path}: no such operation`]
  const responses = operation.responses as unknown as Record<string, ResponseDoc>
  const declared = responses[String(status)]
  if (declared === undefined) return [`${method} ${path}: ${status} is not declared (declared: ${Object.keys(responses).join(', ')})`]
  const problems: string[] = []
  const mediaType = contentType.split(';')[0]!.trim()
  const bodiless = status === 304 || method === 'HEAD'
  if (!bodiless && !Object.hasOwn(declared.content ?? {}, mediaType)) problems.push(`${method} ${path} ${status}: ${mediaType} is not declared`)
  if (mediaType.endsWith('json')) {
    const result = validator.validateResponse(body, operation, status)
    if (!result.valid) problems.push(`${method} ${path} ${status}: body ${JSON.stringify(result.errors)}`)
  }
  const documentedHeaders = new Set(Object.keys(declared.headers ?? {}).map((h) => h.toLowerCase()))
  for (const header of WATCHED_HEADERS) {
    if (headers.has(header) && !documentedHeaders.has(header)) problems.push(`${method} ${path} ${status}: ${header} is sent but not documented`)
  }
  if (!headers.has('x-request-id')) problems.push(`${method} ${path} ${status}: no X-Request-Id`)
  const headerResult = validator.validateResponseHeaders(Object.fromEntries(headers), operation, { statusCode: status })
  if (!headerResult.valid) problems.push(`${method} ${path} ${status}: headers ${JSON.stringify(headerResult.errors)}`)
  return problems
}

t.test('real requests, successes and every error status, conform to the document', async (t) => {
  await validator.init()
  const seen = new Map<string, Set<number>>()
  const problems: string[] = []
  const send = async (method: string, path: string, options: { headers?: Record<string, string>, body?: unknown } = {}) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      ...(options.body === undefined ? {} : { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) })
    })
    const contentType = response.headers.get('content-type') ?? ''
    const text = await response.text()
    // A 304 has no body, whatever content type it repeats.
    const body = contentType.includes('json') && text !== '' ? JSON.parse(text) as unknown : text
    problems.push(...violations({ method, path, status: response.status, headers: response.headers, body, contentType }))
    const key = operationNameOf(method, path) ?? `${method} ${path}`
    seen.set(key, (seen.get(key) ?? new Set()).add(response.status))
    return { status: response.status, body: body as Record<string, unknown> & Array<Record<string, unknown>>, headers: response.headers }
  }
  const { admin } = server
  const as = (headers: Record<string, string>) => ({ headers })

  // Public pages and operations.
  for (const path of ['/', '/favicon.ico', '/health/live', '/health/ready', '/openapi.json', '/docs', '/graphiql']) await send('GET', path)

  // Accounts and logins.
  const login = async (username: string) => (await send('POST', '/auth/login', { body: { username, password: PASSWORD } })).body.access_token as string
  t.equal((await send('POST', '/users', { ...as(admin), body: { username: 'edith', password: PASSWORD, role: 'editor' } })).status, 201)
  t.equal((await send('POST', '/users', { ...as(admin), body: { username: 'vera', password: PASSWORD, role: 'viewer' } })).status, 201)
  t.equal((await send('POST', '/users', { ...as(admin), body: { username: 'vera', password: PASSWORD, role: 'viewer' } })).status, 409, 'a taken username')
  t.equal((await send('POST', '/users', { ...as(admin), body: { username: 'vera', role: 'viewer' } })).status, 400)
  const editor = { authorization: `Bearer ${await login('edith')}` }
  const viewer = { authorization: `Bearer ${await login('vera')}` }
  t.equal((await send('POST', '/users', { ...as(editor), body: { username: 'x', password: PASSWORD, role: 'viewer' } })).status, 403)
  const adminAccount = await send('GET', '/users/me', as(admin))
  t.equal(adminAccount.status, 200)
  t.equal((await send('GET', '/users/me')).status, 401)
  t.equal((await send('GET', '/users?limit=1', as(admin))).headers.has('link'), true, 'a next page of accounts')
  t.equal((await send('GET', '/users?limit=0', as(admin))).status, 400)
  t.equal((await send('GET', '/users', as(editor))).status, 403)
  const olga = await send('POST', '/users', { ...as(admin), body: { username: 'olga', password: PASSWORD, role: 'viewer' } })
  const olgaPath = `/users/${olga.body.id as string}`
  const nobodyAccount = '/users/0192f6c4-0000-7000-8000-0000000000ff'
  t.equal((await send('PATCH', olgaPath, { ...as(admin), body: { role: 'editor', disabled: true } })).status, 200)
  t.equal((await send('PATCH', olgaPath, { ...as(admin), body: { role: 'owner' } })).status, 400)
  t.equal((await send('PATCH', olgaPath, { ...as(editor), body: { disabled: false } })).status, 403)
  t.equal((await send('PATCH', nobodyAccount, { ...as(admin), body: { disabled: false } })).status, 404)
  const adminPath = `/users/${adminAccount.body.id as string}`
  t.match((await send('PATCH', adminPath, { ...as(admin), body: { role: 'editor' } })).body, { statusCode: 409, code: 'LAST_ADMIN' }, 'the last admin keeps the role')
  t.match((await send('DELETE', adminPath, as(admin))).body, { statusCode: 409, code: 'LAST_ADMIN' }, 'the last admin stays')
  t.equal((await send('DELETE', olgaPath, as(editor))).status, 403)
  t.equal((await send('DELETE', olgaPath, as(admin))).status, 200)
  t.equal((await send('DELETE', olgaPath, as(admin))).status, 404)

  // Metrics: an admin, or the scraper's bearer token.
  t.equal((await send('GET', '/metrics', as(admin))).status, 200)
  t.equal((await send('GET', '/metrics', as({ authorization: `Bearer ${METRICS_TOKEN}` }))).status, 200)
  t.equal((await send('GET', '/metrics')).status, 401)
  t.equal((await send('GET', '/metrics', as(editor))).status, 403)
  t.equal((await send('POST', '/users', { body: { username: 'x', password: PASSWORD, role: 'viewer' } })).status, 401)
  t.equal((await send('POST', '/auth/login', { body: { username: 'edith', password: 'wrong password' } })).status, 401)
  t.equal((await send('POST', '/auth/login', { body: { username: 'edith' } })).status, 400)
  t.equal((await send('POST', '/auth/login', { body: '{"username":' })).status, 400, 'malformed JSON')

  // API keys, one of them with a budget of one request per window.
  const key = await send('POST', '/api-keys', { ...as(editor), body: { name: 'reports', scopes: ['people:read'] } })
  t.equal(key.status, 201)
  const keyHeaders = { 'x-api-key': key.body.key as string }
  const tiny = await send('POST', '/api-keys', { ...as(editor), body: { name: 'tiny', rateLimit: 1 } })
  t.equal((await send('GET', '/api-keys', as(editor))).status, 200)
  t.equal((await send('GET', '/api-keys', as(keyHeaders))).status, 403, 'keys do not manage keys')
  t.equal((await send('GET', '/users/me', as(keyHeaders))).status, 200, 'a key: its owner')
  t.equal((await send('GET', `/api-keys/${key.body.id as string}/usage`, as(editor))).status, 200)
  t.equal((await send('GET', '/api-keys/0192f6c4-0000-7000-8000-000000000000/usage', as(editor))).status, 404)
  t.equal((await send('POST', '/api-keys', { ...as(editor), body: { name: '' } })).status, 400)

  // People.
  const ada = await send('POST', '/person', { ...as(editor), body: { name: 'Ada Lovelace', age: 36, email: 'ada@example.org', address: { city: 'London' } } })
  t.equal(ada.status, 201)
  t.ok(ada.headers.get('location'))
  const once = { ...editor, 'idempotency-key': 'create-babbage-1' }
  t.equal((await send('POST', '/person', { ...as(once), body: { name: 'Charles Babbage' } })).status, 201)
  const replayed = await send('POST', '/person', { ...as(once), body: { name: 'Charles Babbage' } })
  t.equal(replayed.headers.get('idempotent-replayed'), 'true', 'a repeat gets the first answer again')
  t.equal((await send('POST', '/person', { ...as(once), body: { name: 'Someone Else' } })).status, 422, 'the key with another body')
  t.equal((await send('POST', '/person', { ...as({ ...editor, 'idempotency-key': 'with space' }), body: { name: 'x' } })).status, 400, 'a malformed key')
  const grace = await send('POST', '/person', { ...as(editor), body: { name: 'Grace Hopper' } })
  const adaId = ada.body.id as string
  const graceId = grace.body.id as string
  const nobody = '0192f6c4-0000-7000-8000-000000000001'
  t.equal((await send('POST', '/person', { ...as(editor), body: { id: adaId, age: 37 } })).status, 200, 'update through POST /person')
  t.equal((await send('POST', '/person', { ...as(editor), body: { id: nobody, age: 37 } })).status, 404)
  t.equal((await send('POST', '/person', { ...as(editor), body: { name: 'x', createdAt: 'now' } })).status, 400)
  t.equal((await send('POST', '/person', { ...as(viewer), body: { name: 'x' } })).status, 403)
  t.equal((await send('POST', '/person', { ...as(editor), headers: { ...editor, 'content-type': 'text/plain' }, body: 'name' })).status, 400, 'a wrong content type')
  const read = await send('GET', `/person/${adaId}`, as(keyHeaders))
  t.equal(read.status, 200)
  const etag = read.headers.get('etag')!
  t.equal((await send('GET', `/person/${adaId}`, as({ ...keyHeaders, 'if-none-match': etag }))).status, 304, 'the copy held is current')
  t.equal((await send('PATCH', `/person/${adaId}`, { ...as({ ...editor, 'if-match': '"stale"' }), body: { age: 40 } })).status, 412)
  t.equal((await send('DELETE', `/person/${adaId}`, as({ ...editor, 'if-match': '"stale"' }))).status, 412)
  t.equal((await send('PATCH', `/person/${adaId}`, { ...as({ ...editor, 'if-match': etag }), body: { age: 36 } })).status, 200, 'If-Match as read')
  t.equal((await send('GET', `/person/${nobody}`, as(keyHeaders))).status, 404)
  t.equal((await send('GET', '/person/not-an-id', as(keyHeaders))).status, 404)
  t.equal((await send('GET', `/person/${adaId}`)).status, 401)
  t.equal((await send('GET', `/person/${adaId}`, as({ authorization: 'Bearer not.a.token' }))).status, 401)
  for (const method of ['PUT', 'PATCH', 'POST']) {
    t.equal((await send(method, `/person/${adaId}`, { ...as(editor), body: { email: null } })).status, 200)
    t.equal((await send(method, `/person/${adaId}`, { ...as(editor), body: { age: 'old' } })).status, 400)
    t.equal((await send(method, `/person/${nobody}`, { ...as(editor), body: { age: 1 } })).status, 404)
  }
  const page = await send('GET', '/people?limit=1', as(viewer))
  t.ok(page.headers.get('link'), 'a next page')
  t.equal((await send('GET', '/people', as(viewer))).status, 200, 'no limit given')
  t.equal((await send('GET', '/people?cursor=nonsense', as(viewer))).status, 400)
  t.equal((await send('GET', '/people?limit=0', as(viewer))).status, 400)

  // Friends and messages.
  t.equal((await send('PUT', `/person/${adaId}/friends/${graceId}`, as(editor))).status, 200)
  t.equal((await send('PUT', `/person/${adaId}/friends/${adaId}`, as(editor))).status, 400)
  t.equal((await send('PUT', `/person/${adaId}/friends/${nobody}`, as(editor))).status, 404)
  t.equal((await send('GET', `/person/${adaId}/friends`, as(viewer))).status, 200)
  t.equal((await send('GET', `/person/${adaId}/friends?limit=500`, as(viewer))).status, 400)
  t.equal((await send('GET', `/person/${nobody}/friends`, as(viewer))).status, 404)
  t.equal((await send('DELETE', `/person/${adaId}/friends/${graceId}`, as(editor))).status, 200)
  t.equal((await send('DELETE', `/person/${adaId}/friends/${nobody}`, as(editor))).status, 404)
  const message = await send('POST', '/message', { ...as(editor), body: { personId: adaId, text: 'Hello, Ada' } })
  t.equal(message.status, 201)
  const sendOnce = { ...editor, 'idempotency-key': 'hello-ada-1' }
  t.equal((await send('POST', '/message', { ...as(sendOnce), body: { personId: adaId, text: 'Once' } })).status, 201)
  t.equal((await send('POST', '/message', { ...as(sendOnce), body: { personId: adaId, text: 'Once' } })).headers.get('idempotent-replayed'), 'true')
  t.equal((await send('POST', '/message', { ...as(sendOnce), body: { personId: adaId, text: 'Twice' } })).status, 422)
  await send('POST', '/message', { ...as(editor), body: { personId: adaId, text: 'Hello again' } })
  t.equal((await send('POST', '/message', { ...as(editor), body: { personId: nobody, text: 'Hello' } })).status, 404)
  t.equal((await send('POST', '/message', { ...as(editor), body: { personId: adaId, text: '' } })).status, 400)
  t.equal((await send('POST', '/message', { ...as(viewer), body: { personId: adaId, text: 'Hello' } })).status, 403)
  t.equal((await send('GET', `/message/${message.body.id as string}`, as(viewer))).status, 200)
  t.equal((await send('GET', `/message/${nobody}`, as(viewer))).status, 404)
  t.ok((await send('GET', `/person/${adaId}/messages?limit=1`, as(viewer))).headers.get('link'), 'a next page')
  t.equal((await send('GET', `/person/${adaId}/messages?cursor=nonsense`, as(viewer))).status, 400)
  t.equal((await send('GET', `/person/${nobody}/messages`, as(viewer))).status, 404)

  // GraphQL over HTTP.
  const query = encodeURIComponent('{ people(limit: 2) { id name } }')
  t.equal((await send('GET', `/graphql?query=${query}`, as(viewer))).status, 200)
  t.equal((await send('POST', '/graphql', { ...as(viewer), body: { query: '{ person(id: "x") { name } }' } })).status, 200)
  t.equal((await send('POST', '/graphql', { ...as(viewer), body: { query: '{ people { nmae } }' } })).status, 400)
  t.equal((await send('POST', '/graphql', { ...as(viewer), body: { query: 'mutation { deletePerson(id: "x") }' } })).status, 403)
  t.equal((await send('GET', `/graphql?query=${encodeURIComponent('mutation { deletePerson(id: "x") }')}`, as(editor))).status, 405)
  t.equal((await send('GET', `/graphql?query=${query}`)).status, 401)
  t.equal((await send('GET', `/graphql?query=${query}`, as({ ...viewer, accept: 'text/html' }))).status, 406)
  const subscription = 'subscription { messageSent { id text } }'
  t.equal((await send('POST', '/graphql', { ...as(viewer), body: { query: subscription } })).status, 400, 'a subscription over POST')
  t.equal((await send('GET', `/graphql?query=${encodeURIComponent(subscription)}`, as(viewer))).status, 405, 'a subscription over GET')

  // Over budget: the key allows one request per window.
  const tinyHeaders = { 'x-api-key': tiny.body.key as string }
  t.equal((await send('GET', '/people', as(tinyHeaders))).status, 200)
  t.equal((await send('GET', '/people', as(tinyHeaders))).status, 429)
  t.equal((await send('POST', '/graphql', { ...as(tinyHeaders), body: { query: '{ people { id } }' } })).status, 429)

  // Webhooks: admins only; the secret in the creation's answer alone.
  const hook = await send('POST', '/webhooks', { ...as(admin), body: { url: 'https://hooks.example.org/in', types: ['person.created'], description: 'CRM' } })
  t.equal(hook.status, 201)
  const hookPath = `/webhooks/${hook.body.id as string}`
  await send('POST', '/webhooks', { ...as(admin), body: { url: 'https://hooks.example.org/other' } })
  t.equal((await send('POST', '/webhooks', { ...as(admin), body: { url: 'ftp://hooks.example.org/in' } })).status, 400)
  t.equal((await send('POST', '/webhooks', { ...as(admin), body: { url: 'https://hooks.example.org/in', types: ['person.renamed'] } })).status, 400)
  t.equal((await send('POST', '/webhooks', { ...as(editor), body: { url: 'https://hooks.example.org/in' } })).status, 403)
  t.ok((await send('GET', '/webhooks?limit=1', as(admin))).headers.get('link'), 'a next page of webhooks')
  t.equal((await send('GET', '/webhooks?cursor=nonsense', as(admin))).status, 400)
  t.equal((await send('GET', hookPath, as(admin))).status, 200)
  t.equal((await send('GET', '/webhooks/0192f6c4-0000-7000-8000-000000000009', as(admin))).status, 404)
  t.equal((await send('PATCH', hookPath, { ...as(admin), body: { disabled: true, description: null } })).status, 200)
  t.equal((await send('PATCH', hookPath, { ...as(admin), body: { secret: 'mine' } })).status, 400)
  t.equal((await send('GET', `${hookPath}/deliveries`, as(admin))).status, 200)
  t.equal((await send('GET', `${hookPath}/deliveries?limit=0`, as(admin))).status, 400)
  t.equal((await send('POST', `${hookPath}/deliveries/0192f6c4-0000-7000-8000-000000000008/retry`, as(admin))).status, 404)
  t.equal((await send('DELETE', hookPath, as(admin))).status, 200)
  t.equal((await send('DELETE', hookPath, as(admin))).status, 404)

  // Password changes end the account's tokens: last for this account.
  await send('POST', '/users', { ...as(admin), body: { username: 'pat', password: PASSWORD, role: 'viewer' } })
  const pat = { authorization: `Bearer ${await login('pat')}` }
  t.equal((await send('POST', '/auth/password', { ...as(pat), body: { currentPassword: PASSWORD } })).status, 400)
  t.equal((await send('POST', '/auth/password', { ...as(keyHeaders), body: { currentPassword: PASSWORD, newPassword: `${PASSWORD}-new` } })).status, 403, 'a key')
  t.match((await send('POST', '/auth/password', { ...as(pat), body: { currentPassword: 'not the password', newPassword: `${PASSWORD}-new` } })).body, { statusCode: 401, code: 'INVALID_CREDENTIALS' })
  t.equal((await send('POST', '/auth/password', { ...as(pat), body: { currentPassword: PASSWORD, newPassword: `${PASSWORD}-new` } })).status, 200)
  t.equal((await send('GET', '/users/me', as(pat))).status, 401, 'the token ended with the password')

  t.equal((await send('GET', '/events?limit=3&type=person.created,person.updated', as(admin))).status, 200)
  t.equal((await send('GET', '/events?type=person.renamed', as(admin))).status, 400)
  t.equal((await send('GET', '/events', as(editor))).status, 403)

  // Deletions last.
  t.equal((await send('DELETE', `/api-keys/${key.body.id as string}`, as(editor))).status, 200)
  t.equal((await send('DELETE', `/api-keys/${key.body.id as string}`, as(editor))).status, 404)
  t.equal((await send('DELETE', `/person/${graceId}`, as(editor))).status, 200)
  t.equal((await send('DELETE', `/person/${graceId}`, as(editor))).status, 404)

  t.same(problems, [], 'no response breaks the document')
  t.comment([...seen].map(([key, statuses]) => `${key}: ${[...statuses].sort().join(' ')}`).join('\n'))
  const untried = operations.filter(({ method, path }) => !seen.has(`${method.toUpperCase()} ${path}`)).map(({ name }) => name)
  t.same(untried, [], 'every documented operation was exercised')
})

// --- a generated client -----------------------------------------------------------

// The client code a consumer would write. It compiles only if the document
// describes the operations it uses as they are (a required `limit` on
// /people, say, would fail it).
const CLIENT = `import createClient from 'openapi-fetch'
import type { paths } from './api.js'

export const run = async (baseUrl: string, authorization: string) => {
  const client = createClient<paths>({ baseUrl, headers: { authorization } })
  const created = await client.POST('/person', { body: { name: 'Katherine Johnson', age: 101 } })
  if (created.data === undefined) throw new Error('not created: ' + JSON.stringify(created.error))
  const id: string = created.data.id
  const fetched = await client.GET('/person/{id}', { params: { path: { id } } })
  const name: string | undefined = fetched.data?.name
  const people = await client.GET('/people')
  const firstPage = await client.GET('/people', { params: { query: { limit: 1 } } })
  const friends = await client.GET('/person/{id}/friends', { params: { path: { id } } })
  const missing = await client.GET('/person/{id}', { params: { path: { id: '0192f6c4-0000-7000-8000-000000000009' } } })
  const code: string | undefined = missing.error?.code
  const anonymous = await createClient<paths>({ baseUrl }).GET('/people')
  return {
    name,
    peopleCount: people.data?.length,
    next: firstPage.response.headers.get('link'),
    friends: friends.data,
    missing: { status: missing.response.status, code },
    anonymous: { status: anonymous.response.status, code: anonymous.error?.code }
  }
}
`

t.test('a TypeScript client generated from the document type-checks and works against the server', async (t) => {
  // Generated afresh on every run, so it cannot go stale; the project's
  // node_modules are linked in for openapi-fetch.
  const dir = mkdtempSync(join(tmpdir(), 'people-service-client-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  symlinkSync(fileURLToPath(new URL('../../../node_modules', import.meta.url)), join(dir, 'node_modules'), 'dir')
  writeFileSync(join(dir, 'api.d.ts'), astToString(await openapiTS(structuredClone(document) as never)))
  writeFileSync(join(dir, 'client.ts'), CLIENT)
  writeFileSync(join(dir, 'package.json'), '{ "type": "module" }')

  const program = ts.createProgram([join(dir, 'client.ts')], {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    skipLibCheck: true
  })
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
  t.same(diagnostics, [], 'the client type-checks against the generated types')

  const client = await import(join(dir, 'client.ts')) as { run: (url: string, authorization: string) => Promise<unknown> }
  const result = await client.run(server.url, server.admin.authorization!)
  t.match(result, {
    name: 'Katherine Johnson',
    peopleCount: Number,
    next: /^<\/people\?limit=1&cursor=.+>; rel="next"$/,
    friends: [],
    missing: { status: 404, code: 'PERSON_NOT_FOUND' },
    anonymous: { status: 401, code: 'UNAUTHENTICATED' }
  })
})

// Last: it takes the database away from the server.
t.test('when the database is gone, the 5xx answers conform to the document too', async (t) => {
  await validator.init()
  await server.database.close()
  const problems: string[] = []
  const statuses: number[] = []
  for (const [method, path, body] of [
    ['GET', '/person/0192f6c4-0000-7000-8000-000000000001'],
    ['GET', '/people'],
    ['POST', '/graphql', { query: '{ people { id } }' }]
  ] as const) {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { ...server.admin, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const contentType = response.headers.get('content-type') ?? ''
    const text = await response.text()
    statuses.push(response.status)
    problems.push(...violations({ method, path, status: response.status, headers: response.headers, body: JSON.parse(text), contentType }))
  }
  // GraphQL reports a failed field beside `data`, with 200 (GraphQL over HTTP).
  t.same(statuses, [500, 500, 200], 'REST: 500; GraphQL: the error in the result')
  t.same(problems, [], 'no response breaks the document')
})
