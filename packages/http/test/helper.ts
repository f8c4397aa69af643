import { connect } from 'node:net'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import tap from 'tap'
import { createInMemoryPorts, fastPasswordHasher, SETUP_ACTOR } from '@people-service/domain/testing'
import { aesGcmWebhookSecretBox, anyWebhookDestination, localKeyRevocations, noMessageEvents, systemClock, uuidv7Generator, type Person, type Ports, type Role } from '@people-service/domain'
import { buildApp, inProcessMessageBus, type AccessOptions, type AppOptions } from '@people-service/http'
import { createDatabase, createRepositories, migrateToLatest, type DatabaseHandle, type Repositories } from '@people-service/infra'
import { postgresDatabase, type PostgresTestDatabase, type Teardown } from '@people-service/infra/testing'
import type { FastifyInstance, FastifyRequest, InjectOptions, LightMyRequestResponse } from 'fastify'
// The route schema's `hide` (kept out of the OpenAPI document) is @fastify/swagger's.
import type {} from '@fastify/swagger'

export const TEST_JWT_SECRET = 'a-test-secret-that-is-long-enough-for-hs256!'
export const PASSWORD = 'correct horse battery staple'

export type Headers = Record<string, string>

export interface BuildOptions extends Partial<Omit<AppOptions, 'access'>> {
  access?: Partial<AccessOptions>
  /** Adds routes before the app starts (routes stand in for other adapters). */
  extend?: (app: FastifyInstance) => void
}

let accounts = 0

/*
 * Tests run many servers at once on a shared machine, where the event loop
 * can fall a second behind; the overload check would then answer 503 to
 * tests that are not about it. It is off (0) unless a test sets its own.
 */
const NO_PRESSURE = { maxEventLoopDelay: 0 }

/** Creates an account with a role and logs it in the way a client would. */
export const loginAs = async (app: FastifyInstance, role: Role, username = `${role}-${++accounts}`): Promise<Headers> => {
  await app.access.useCases.createAccount(SETUP_ACTOR, { username, password: PASSWORD, role })
  const response = await app.inject({ method: 'POST', url: '/auth/login', payload: { username, password: PASSWORD } })
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`)
  return { authorization: `Bearer ${response.json<{ access_token: string }>().access_token}` }
}

/** Creates an API key as `owner` and returns the headers that use it. */
export const apiKeyOf = async (app: FastifyInstance, owner: Headers, body: Record<string, unknown> = {}): Promise<{ 'x-api-key': string, id: string }> => {
  const response = await app.inject({ method: 'POST', url: '/api-keys', headers: owner, payload: { name: 'test key', ...body } })
  if (response.statusCode !== 201) throw new Error(`key creation failed: ${response.body}`)
  const { id, key } = response.json<{ id: string, key: string }>()
  return { 'x-api-key': key, id }
}

/** The account or key id that credentials authenticate as: what a message records as its sender. */
export const callerIdOf = async (app: FastifyInstance, credentials: Headers): Promise<string> =>
  (await app.access.authenticate({ authorization: credentials.authorization, apiKey: credentials['x-api-key'] })).id

/** Full ports over some repositories (a real database's), as the composition root makes them. */
export const portsOver = (repositories: Repositories): Ports => ({
  ...repositories,
  passwords: fastPasswordHasher(),
  revocations: localKeyRevocations(),
  clock: systemClock,
  ids: uuidv7Generator(),
  events: noMessageEvents,
  webhookSecrets: aesGcmWebhookSecretBox(globalThis.crypto.getRandomValues(new Uint8Array(32))),
  webhookDestinations: anyWebhookDestination
})

let postgres: Promise<PostgresTestDatabase> | undefined

/**
 * One PostgreSQL database per test process, emptied for each app: creating
 * and migrating a database per test would cost more than the test itself.
 * It belongs to the root test, so it is dropped once the file's tests are
 * done. Tests in a file run one at a time, so no app sees another's data;
 * an app built earlier in the same test sees its data go too.
 */
export const emptyPostgres = async (): Promise<PostgresTestDatabase> => {
  postgres ??= postgresDatabase(tap)
  const database = await postgres
  await database.reset()
  return database
}

/**
 * Empty repositories: in memory, or — with PEOPLE_TEST_DATABASE=sqlite or
 * postgres, as the suites under test/sqlite/ and test/postgres/ set it — over
 * a real database, so the same HTTP suites run against each.
 */
const defaultPorts = async (t: Teardown): Promise<Ports> => {
  const database = process.env.PEOPLE_TEST_DATABASE
  if (database === undefined) return createInMemoryPorts({ passwords: fastPasswordHasher() })
  if (database === 'sqlite') return portsOver(createRepositories(await sqliteDatabase(t)))
  if (database === 'postgres') return portsOver(createRepositories(await emptyPostgres()))
  throw new Error(`PEOPLE_TEST_DATABASE must be sqlite or postgres, not ${database}`)
}

/**
 * A fresh app over empty repositories (see defaultPorts), closed when the test ends,
 * with the same authentication as production and an admin logged in.
 * Passwords are hashed with cheap scrypt parameters so logins stay fast.
 */
export const build = async (t: Teardown, options: BuildOptions = {}) => {
  const ports: Ports = options.ports ?? await defaultPorts(t)
  const { extend: _extend, ...appOptions } = options
  const app = await buildApp({
    pressure: NO_PRESSURE,
    ...appOptions,
    ports,
    access: { ...options.access, tokens: { secret: TEST_JWT_SECRET, ...options.access?.tokens } }
  })
  t.teardown(() => app.close())
  options.extend?.(app)
  const admin = await loginAs(app, 'admin')
  return { app, ports, admin, api: clientOf(app, admin), as: (role: Role) => loginAs(app, role) }
}

/** Anything that injects requests: the app itself, or a client with credentials. */
export interface Injector {
  inject(options: InjectOptions | string): Promise<LightMyRequestResponse>
}

/** The app as one caller sees it: every request carries that caller's credentials. */
export const clientOf = (app: FastifyInstance, credentials: Headers): Injector => ({
  inject: (options) => {
    const request = typeof options === 'string' ? { url: options } : options
    return app.inject({ ...request, headers: { ...credentials, ...request.headers as Headers } })
  }
})

/** The URL of a `Link: <…>; rel="next"` header, or undefined when there is none (the last page). */
export const nextLink = (link: string | string[] | number | undefined): string | undefined =>
  typeof link === 'string' ? /^<([^>]+)>; rel="next"$/.exec(link)?.[1] : undefined

/** The `cursor` of a `Link: <…>; rel="next"` header, or undefined on the last page. */
export const nextCursor = (link: string | string[] | number | undefined): string | undefined => {
  const url = nextLink(link)
  return url === undefined ? undefined : new URL(url, 'http://x').searchParams.get('cursor') ?? undefined
}

/** A cursor written by the test, in the form the service's take (base64url of a JSON array), to feed it what it never issued. */
export const forgedCursor = (key: unknown): string => Buffer.from(JSON.stringify(key)).toString('base64url')

export const ADA = {
  name: 'Ada Lovelace',
  age: 36,
  email: 'ada@example.org',
  address: { street: "12 St James's Square", city: 'London', country: 'UK' }
}

/** The folders of the SQLite files below not removed yet: removed with the process at the latest. */
const openFolders = new Set<string>()
process.once('exit', () => { for (const dir of openFolders) rmSync(dir, { recursive: true, force: true }) })

/** A migrated SQLite file, removed when the test ends; `statements` counts what it receives. */
export const sqliteDatabase = async (t: Teardown): Promise<DatabaseHandle & { statements: string[] }> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-http-'))
  const statements: string[] = []
  const handle = createDatabase({
    url: `sqlite:${join(dir, 'people.db')}`,
    log: (event) => { if (event.level === 'query') statements.push(event.query.sql) }
  })
  // Gone however the test ends: after it, even when closing fails, or with
  // the process when it is cut short (a timeout, an exception).
  openFolders.add(dir)
  t.teardown(async () => {
    try {
      await handle.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
      openFolders.delete(dir)
    }
  })
  await migrateToLatest(handle)
  statements.length = 0
  return { ...handle, statements }
}

/**
 * An app over a real SQLite file holding `people` people, each a friend of
 * the next `friends` (both ways) and holding `messages` messages, with the
 * statements it runs counted from the first request a test sends (the
 * caller's account already read once, then served from the credential cache).
 */
export const countingSqliteApp = async (
  t: Teardown,
  { people: count, friends, messages = 0, graphqlSqlPlan }: { people: number, friends: number, messages?: number, graphqlSqlPlan: boolean }
) => {
  const database = await sqliteDatabase(t)
  const repositories = createRepositories(database)
  const ids = uuidv7Generator()
  const now = new Date()
  const people: Person[] = []
  for (let i = 0; i < count; i++) {
    const person: Person = { id: ids.next(), name: `Person ${i}`, age: 20 + (i % 50), email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await repositories.people.insert(person)
    people.push(person)
  }
  for (let i = 0; i < count; i++) {
    for (let k = 1; k <= friends; k++) await repositories.friendships.add(people[i]!.id, people[(i + k) % count]!.id, now)
    for (let m = 0; m < messages; m++) {
      await repositories.messages.insert({ id: ids.next(), personId: people[i]!.id, text: `hello ${i}`, senderId: 'seed', sentAt: now })
    }
  }
  const { api } = await build(t, { ports: portsOver(repositories), graphqlSqlPlan })
  await api.inject('/users/me')
  database.statements.length = 0
  return { api, statements: database.statements, people }
}

/**
 * The app as the composition root wires it (SQLite file, in-process message
 * bus), listening on a free port of 127.0.0.1; closed when the test ends.
 */
export const realServer = async (t: Teardown, options: Partial<Omit<AppOptions, 'access'>> & { access?: Partial<AccessOptions> } = {}) => {
  const database = await sqliteDatabase(t)
  const messageBus = inProcessMessageBus()
  const app = await buildApp({
    pressure: NO_PRESSURE,
    ...options,
    ports: {
      ...createRepositories(database),
      passwords: fastPasswordHasher(),
      revocations: localKeyRevocations(),
      clock: systemClock,
      ids: uuidv7Generator(),
      events: messageBus.events,
      webhookSecrets: aesGcmWebhookSecretBox(globalThis.crypto.getRandomValues(new Uint8Array(32))),
      webhookDestinations: anyWebhookDestination
    },
    access: { ...options.access, tokens: { secret: TEST_JWT_SECRET } },
    messageBus
  })
  t.teardown(async () => {
    await app.close()
    await messageBus.close()
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  const admin = await loginAs(app, 'admin')
  return { app, database, admin, url: `http://127.0.0.1:${address.port}` }
}

export interface GraphQLBody {
  data?: Record<string, unknown> | null
  errors?: Array<{ message: string, path?: Array<string | number>, extensions?: Record<string, unknown> }>
}

/** A response's `extensions`: the cost report of an operation that was charged, or refused by the budget. */
export interface GraphQLExtensions {
  cost?: { requested: number, charged: number }
}

/** The request a client sends for a query over GET: query, variables as JSON, operationName. */
export const getGraphQL = (query: string, variables?: Record<string, unknown>, operationName?: string): InjectOptions => ({
  method: 'GET',
  url: '/graphql',
  query: {
    query,
    ...(variables === undefined ? {} : { variables: JSON.stringify(variables) }),
    ...(operationName === undefined ? {} : { operationName })
  }
})

export const postGraphQL = (query: string, variables?: Record<string, unknown>, operationName?: string): InjectOptions => ({
  method: 'POST',
  url: '/graphql',
  headers: { 'content-type': 'application/json' },
  payload: { query, ...(variables === undefined ? {} : { variables }), ...(operationName === undefined ? {} : { operationName }) }
})

/**
 * Runs a GraphQL request and answers its status, its `data` and `errors`
 * (`body`), and apart from them its `extensions` (the cost report, which
 * test/graphql-cost.test.ts holds to account).
 */
export const graphql = async (app: Injector, request: InjectOptions) => {
  const response = await app.inject(request)
  const { extensions, ...body } = response.json<GraphQLBody & { extensions?: GraphQLExtensions }>()
  return { status: response.statusCode, body: body as GraphQLBody, extensions, response }
}

/** POSTs an operation and returns its data, failing on any error. */
export const gqlData = async <T = Record<string, unknown>>(app: Injector, query: string, variables?: Record<string, unknown>): Promise<T> => {
  const { status, body } = await graphql(app, postGraphQL(query, variables))
  if (status !== 200 || body.errors !== undefined) throw new Error(`GraphQL failed (${status}): ${JSON.stringify(body.errors)}`)
  return body.data as T
}

/**
 * Stands in for an adapter that charges by the work it is asked for (GraphQL
 * by cost): GET /weighted/<units> charges that many at once to whoever the
 * credentials name, with the headers; /weighted-socket/<units> as the
 * WebSocket adapter does, through `access.charge` (usage counted, no reply).
 */
export const weightedRoutes = (app: FastifyInstance): void => {
  const callerOfHeaders = (request: FastifyRequest) => app.access.authenticate({
    authorization: request.headers.authorization,
    ...(typeof request.headers['x-api-key'] === 'string' ? { apiKey: request.headers['x-api-key'] } : {})
  })
  const config = { operation: 'health.live' as const }
  const schema = { hide: true }
  app.get<{ Params: { units: string } }>('/weighted/:units', { config, schema }, async (request, reply) => {
    await app.access.limits.charge(request, reply, await callerOfHeaders(request), Number(request.params.units))
    return { charged: Number(request.params.units) }
  })
  app.get<{ Params: { units: string } }>('/weighted-socket/:units', { config, schema }, async (request) => {
    await app.access.charge(request, await callerOfHeaders(request), Number(request.params.units))
    return { charged: Number(request.params.units) }
  })
}

/** A response's status and budget, as `200 10/6` (limit/remaining). */
export const budgetOf = (response: { statusCode: number, headers: Record<string, unknown> }) =>
  `${response.statusCode} ${String(response.headers['ratelimit-limit'])}/${String(response.headers['ratelimit-remaining'])}`

/**
 * Writes `text` on a raw TCP connection to `url`'s server at once: what came
 * back, and whether the server closed the socket before `ms` passed.
 */
export const rawExchange = async (url: string, text: string, ms: number): Promise<{ received: string, closedByServer: boolean }> => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  await new Promise((resolve) => socket.once('connect', resolve))
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: string) => { received += chunk })
  const closed = new Promise<boolean>((resolve) => {
    socket.once('close', () => resolve(true))
    setTimeout(() => resolve(false), ms)
  })
  socket.write(text)
  const closedByServer = await closed
  socket.destroy()
  return { received, closedByServer }
}
