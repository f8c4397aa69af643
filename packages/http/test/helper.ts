import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInMemoryPorts } from '@people-service/domain/testing'
import { systemClock, uuidv7Generator, type Ports } from '@people-service/domain'
import { buildApp, inProcessMessageBus, type AppOptions } from '@people-service/http'
import { createDatabase, createRepositories, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import type { FastifyInstance, InjectOptions } from 'fastify'

interface Teardown { teardown(fn: () => unknown): void }

/** A fresh app over empty in-memory repositories, closed when the test ends. */
export const build = async (t: Teardown, options: Partial<AppOptions> = {}) => {
  const ports: Ports = options.ports ?? createInMemoryPorts()
  const app = await buildApp({ ...options, ports })
  t.teardown(() => app.close())
  return { app, ports }
}

export const ADA = {
  name: 'Ada Lovelace',
  age: 36,
  email: 'ada@example.org',
  address: { street: "12 St James's Square", city: 'London', country: 'UK' }
}

/** A migrated SQLite file, removed when the test ends; `statements` counts what it receives. */
export const sqliteDatabase = async (t: Teardown): Promise<DatabaseHandle & { statements: string[] }> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-http-'))
  const statements: string[] = []
  const handle = createDatabase({
    url: `sqlite:${join(dir, 'people.db')}`,
    log: (event) => { if (event.level === 'query') statements.push(event.query.sql) }
  })
  await migrateToLatest(handle)
  statements.length = 0
  t.teardown(async () => {
    await handle.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return { ...handle, statements }
}

/**
 * The app as the composition root wires it (SQLite file, in-process message
 * bus), listening on a free port of 127.0.0.1; closed when the test ends.
 */
export const realServer = async (t: Teardown, options: Partial<AppOptions> = {}) => {
  const database = await sqliteDatabase(t)
  const messageBus = inProcessMessageBus()
  const app = await buildApp({
    ...options,
    ports: { ...createRepositories(database), clock: systemClock, ids: uuidv7Generator(), events: messageBus.events },
    messageBus
  })
  t.teardown(async () => {
    await app.close()
    await messageBus.close()
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  if (address === null || typeof address === 'string') throw new Error('the server has no TCP address')
  return { app, database, url: `http://127.0.0.1:${address.port}` }
}

export interface GraphQLBody {
  data?: Record<string, unknown> | null
  errors?: Array<{ message: string, path?: Array<string | number>, extensions?: Record<string, unknown> }>
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

/** Runs a GraphQL request and answers status and body. */
export const graphql = async (app: FastifyInstance, request: InjectOptions) => {
  const response = await app.inject(request)
  return { status: response.statusCode, body: response.json<GraphQLBody>(), response }
}

/** POSTs an operation and returns its data, failing on any error. */
export const gqlData = async <T = Record<string, unknown>>(app: FastifyInstance, query: string, variables?: Record<string, unknown>): Promise<T> => {
  const { status, body } = await graphql(app, postGraphQL(query, variables))
  if (status !== 200 || body.errors !== undefined) throw new Error(`GraphQL failed (${status}): ${JSON.stringify(body.errors)}`)
  return body.data as T
}
