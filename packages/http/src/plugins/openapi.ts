import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify'
import { isOperation, operationOfUrl, POLICY, type Operation, type Requirement } from '../auth/policy.js'
import { errorResponse, type ErrorStatus } from '../schemas/error.schema.js'
import { GraphQLResponseSchema } from '../schemas/graphql-http.schemas.js'
import { headersOf, withoutBody, type HeaderName } from '../schemas/response.schemas.js'
import { PAGE_CONTENT_SECURITY_POLICY } from './security-headers.js'
import { FOREIGN_ROUTES } from './openapi-foreign-routes.js'
import { assetOf, assetsFromMemory, sendAsset, type Asset } from './static-assets.js'
import { SERVICE_VERSION } from '../routes/root.routes.js'

/** Swagger UI's own files, which @fastify/swagger-ui serves under /docs/static/. */
const SWAGGER_UI_FILES = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')

/** The OpenAPI document's own type, as Fastify gives a JSON answer. */
const JSON_TYPE = 'application/json; charset=utf-8'

/** Every tag an operation may carry; an undeclared one fails the start. */
export const TAGS = [
  { name: 'people', description: 'People: create, read, update, delete, list' },
  { name: 'friends', description: 'Friendships, always mutual' },
  { name: 'messages', description: 'Messages sent to people' },
  { name: 'auth', description: 'Logging in, accounts and API keys' },
  { name: 'graphql', description: 'The same data through GraphQL (schema and limits: GRAPHQL.md)' },
  { name: 'events', description: 'Every change as a CloudEvent, in commit order: the audit trail, for other systems' },
  { name: 'webhooks', description: 'Events POSTed to other systems, signed (Standard Webhooks), and the log of their deliveries' },
  { name: 'operations', description: 'Health, metrics and this document' },
  { name: 'docs', description: 'Pages for people: these docs and the GraphQL editor' }
] as const

export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key from POST /api-keys, shown once when created.' },
  bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token from POST /auth/login.' },
  metricsToken: { type: 'http', scheme: 'bearer', description: 'The deployment\'s METRICS_TOKEN, for a Prometheus scraper: `Authorization: Bearer $METRICS_TOKEN`.' }
} as const

/**
 * An operation's security, from its row of the policy table: public ones
 * need nothing; the others take a key or a token, holding the row's scope
 * (OpenAPI 3.1 lets non-OAuth schemes list the roles they need); account-only
 * ones take a token; the metrics row also takes the METRICS_TOKEN bearer.
 */
export const securityOf = (requirement: Requirement): Array<Record<string, string[]>> => {
  if (requirement.access === 'public') return []
  const scopes = requirement.scope === undefined ? [] : [requirement.scope]
  const credentials: Array<Record<string, string[]>> = requirement.accounts === true ? [{ bearerAuth: scopes }] : [{ bearerAuth: scopes }, { apiKey: scopes }]
  return requirement.metricsToken === true ? [...credentials, { metricsToken: [] }] : credentials
}

const RATE_LIMIT_HEADERS: HeaderName[] = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']

/** The error statuses a row implies: no caller 401, too many requests 429, a missing scope 403. */
const impliedErrors = (requirement: Requirement): ErrorStatus[] => {
  if (requirement.access === 'public') return []
  return requirement.scope !== undefined || requirement.accounts === true ? [401, 403, 429] : [401, 429]
}

type ResponseEntry = Record<string, unknown> & { description?: string, examples?: unknown[], headers?: Record<string, unknown>, content?: Record<string, unknown> }
export type DocumentedSchema = FastifySchema & {
  operationId?: string
  summary?: string
  description?: string
  tags?: readonly string[]
  hide?: boolean
  security?: unknown
  response?: Record<string, ResponseEntry>
}

const isHidden = (route: Pick<RouteOptions, 'config' | 'schema'>): boolean =>
  route.config?.methodNotAllowed === true || (route.schema as DocumentedSchema | undefined)?.hide === true

const operationOf = (route: Pick<RouteOptions, 'config' | 'url'>): Operation => {
  const operation = route.config?.operation ?? operationOfUrl(route.url)
  if (!isOperation(operation)) throw new Error(`${route.url} has no row in the policy table`)
  return operation
}

/** An annotated response schema (schemas/response.schemas.ts) as an OpenAPI response with its example. */
const asDocumentResponse = (entry: ResponseEntry, headers: Record<string, unknown>): ResponseEntry => {
  if (entry.content !== undefined) return { ...entry, headers: { ...headers, ...entry.headers } }
  if (entry.type === 'null') return { type: 'null', description: entry.description, headers: { ...headers, ...entry.headers } }
  const { description, examples, headers: own, ...schema } = entry
  return {
    description,
    headers: { ...headers, ...own },
    content: { 'application/json': { schema, ...(examples === undefined ? {} : { example: examples[0] }) } }
  }
}

/**
 * The route's schema as the document shows it: the route's own operationId,
 * tags, summary and responses, completed from its policy row — security,
 * 401/403/429, rate-limit headers, Cache-Control — and with what any request can meet
 * (X-Request-Id; 400 for a query string too long or an unmet `Expect`; 500, 503).
 * The route's own response for a status wins.
 */
export const documentedSchema = (schema: DocumentedSchema, operation: Operation): DocumentedSchema => {
  const requirement = POLICY[operation]
  // Logins are counted per address and username (auth/rate-limits.ts), so they carry the headers too.
  const charged = requirement.access === 'caller' || operation === 'auth.login'
  // The access hook marks every answer to an authenticated request no-store
  // (plugins/access.ts), whatever its status (a 401 too, for a wrong current password).
  const headers = headersOf(['X-Request-Id', ...(charged ? RATE_LIMIT_HEADERS : []), ...(requirement.access === 'public' ? [] : ['Cache-Control' as const])])
  const implied = Object.fromEntries([400 as const, ...impliedErrors(requirement), 500 as const, 503 as const].map((status) => [status, errorResponse(status)]))
  const responses = { ...implied, ...schema.response } as Record<string, ResponseEntry>
  return {
    ...schema,
    security: securityOf(requirement),
    response: Object.fromEntries(Object.entries(responses).map(([status, entry]) => [status, asDocumentResponse(entry, headers)]))
  }
}

const DECLARED_TAGS = new Set<string>(TAGS.map((tag) => tag.name))

/** Why a route's schema does not document it, or undefined when it does. */
export const missingDocumentation = (schema: DocumentedSchema | undefined): string | undefined => {
  if (schema === undefined) return 'no schema'
  if (typeof schema.operationId !== 'string' || schema.operationId === '') return 'no operationId'
  if (typeof schema.summary !== 'string' || schema.summary === '') return 'no summary'
  if (schema.tags === undefined || schema.tags.length === 0) return 'no tags'
  const undeclared = schema.tags.find((tag) => !DECLARED_TAGS.has(tag))
  if (undeclared !== undefined) return `the tag '${undeclared}' is not declared in TAGS`
  const responses = Object.entries(schema.response ?? {})
  if (!responses.some(([status]) => status.startsWith('2'))) return 'no success (2xx) response'
  for (const [status, entry] of responses) {
    if (typeof entry.description !== 'string') return `response ${status} has no description (use documented() or errorResponses())`
    if (entry.content === undefined && entry.examples === undefined && entry.type !== 'null') return `response ${status} has no example`
  }
  return undefined
}

const routeKey = (method: string, url: string): string => `${method} ${url}`

/**
 * Checks every route as it is added: a route the document would show must
 * say what it is (operationId, summary, declared tags) and what it answers
 * (a success and every error status, each with a description and example).
 * A route that does not fails the start, as one with no policy row does.
 */
const requireDocumentation = (app: FastifyInstance): void => {
  const operationIds = new Map<string, string>()
  app.addHook('onRoute', (route) => {
    // A route with no policy row is refused by the access hook, with that reason.
    if (isHidden(route) || !isOperation(route.config?.operation ?? operationOfUrl(route.url))) return
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue
      const key = routeKey(method, route.url)
      const schema = FOREIGN_ROUTES[key] ?? route.schema as DocumentedSchema | undefined
      const missing = missingDocumentation(schema)
      if (missing !== undefined) throw new Error(`${key} is not documented: ${missing} (plugins/openapi.ts)`)
      const id = schema!.operationId!
      const other = operationIds.get(id)
      if (other !== undefined && other !== key) throw new Error(`${key} has the operationId '${id}' of ${other}`)
      operationIds.set(id, key)
    }
  })
}

/**
 * The OpenAPI document is generated from the route schemas, so it cannot
 * drift from what the routes validate and return. Registered before the
 * routes: it collects them, and checks them, as they are added.
 */
export const registerOpenApi = async (app: FastifyInstance): Promise<void> => {
  requireDocumentation(app)
  // Referred to by the /graphql documentation only (the GraphQL routes read the requests themselves).
  app.addSchema(GraphQLResponseSchema)
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'People Service',
        version: SERVICE_VERSION,
        license: { name: 'MIT', identifier: 'MIT' },
        description: 'People, friendships and messages over REST; the same data over GraphQL at /graphql (GRAPHQL.md). ' +
          'Errors are JSON `{ statusCode, error, message, code? }`; every response carries `X-Request-Id`; ' +
          'responses to a caller carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`, and a 429 `Retry-After`.'
      },
      // Relative: the document describes the server that serves it, wherever that is.
      servers: [{ url: '/', description: 'the server this document was fetched from' }],
      tags: [...TAGS],
      components: { securitySchemes: SECURITY_SCHEMES }
    },
    transform: ({ schema, url: routeUrl, route }) => {
      // A plugin's root route under a prefix ('/docs/') is served without the slash too: shown as the contract names it.
      const url = routeUrl.length > 1 && routeUrl.endsWith('/') ? routeUrl.slice(0, -1) : routeUrl
      const method = [route.method].flat().find((m) => m !== 'HEAD') ?? 'GET'
      const own = FOREIGN_ROUTES[routeKey(method, url)] ?? schema as DocumentedSchema | undefined
      if (own === undefined || isHidden({ config: route.config, schema: own })) return { schema: { ...schema, hide: true }, url }
      return { schema: documentedSchema(own, operationOf(route)), url }
    },
    // Shared schemas become named components instead of anonymous copies.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) }
  })
  // The document is written out once, at its first request, and compressed
  // once (static-assets.ts): every answer is those bytes. Built per request
  // it cost 3 ms of CPU (YAML more) to anyone, and a client that pipelined
  // a thousand requests for it made the server hold a thousand copies
  // (plugins/pipelining.ts).
  let json: Asset | undefined
  let yaml: Asset | undefined
  const asJson = (): Asset => (json ??= assetOf(Buffer.from(JSON.stringify(app.swagger())), JSON_TYPE))
  const asYaml = (): Asset => (yaml ??= assetOf(Buffer.from(app.swagger({ yaml: true })), 'application/x-yaml'))
  // Its files from memory: @fastify/static held a file a request (static-assets.ts).
  assetsFromMemory(app, '/docs/static/*', SWAGGER_UI_FILES)
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: PAGE_CONTENT_SECURITY_POLICY,
    // The page's own copies of the document, answered from the same text.
    uiHooks: {
      preHandler: (request, reply, done) => {
        const route = request.routeOptions.url
        if (route === '/docs/json') sendAsset(request, reply, asJson()).catch(done)
        else if (route === '/docs/yaml') sendAsset(request, reply, asYaml()).catch(done)
        else done()
      }
    },
    // Tokens and keys typed into the page stay in the page: not in localStorage.
    uiConfig: { persistAuthorization: false, deepLinking: true, displayOperationId: true }
  })
  app.get('/openapi.json', {
    config: { operation: 'openapi' },
    schema: {
      operationId: 'getOpenApiDocument',
      tags: ['operations'],
      summary: 'This document: OpenAPI 3.1',
      response: {
        200: {
          ...Type.Object({ openapi: Type.String(), info: Type.Object({}, { additionalProperties: true }), paths: Type.Object({}, { additionalProperties: true }) }, { additionalProperties: true }),
          description: 'The OpenAPI document, compressed as Accept-Encoding allows',
          headers: headersOf(['ETag', 'Cache-Control', 'Content-Encoding', 'Vary']),
          examples: [{ openapi: '3.1.0', info: { title: 'People Service', version: '0.1.0' }, paths: {} }]
        },
        304: withoutBody({ description: 'The document the client holds (If-None-Match) is current', headers: ['ETag', 'Cache-Control', 'Vary'] })
      }
    }
  }, async (request, reply) => sendAsset(request, reply, asJson()))
}
