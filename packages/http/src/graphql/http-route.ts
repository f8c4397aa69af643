import type { UseCases } from '@people-service/domain'
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import type { RateLimits } from '../auth/rate-limits.js'
import { callerOf } from '../plugins/access.js'
import { createContext } from './context.js'
import { ResponseTooLarge } from '../response-size.js'
import { requestError, type FormattedResult } from './error-format.js'
import type { Pipeline } from './pipeline.js'
import { contentTypeOf, negotiate } from './transport.js'

/** What a GraphQL request over HTTP asks, read from a GET query string or a POST body. */
export interface OperationParams {
  source: string
  variables: Record<string, unknown> | undefined
  operationName: string | undefined
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A JSON object in a query string parameter; null and absent are no object. */
const jsonObjectParam = (value: unknown, name: string): Record<string, unknown> | undefined => {
  if (value === undefined) return undefined
  if (typeof value !== 'string') throw requestError(400, `${name} must be given once, as a JSON object`, 'VALIDATION_FAILED')
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch {
    throw requestError(400, `${name} must be a JSON object`, 'BAD_REQUEST')
  }
  if (parsed !== null && !isPlainObject(parsed)) throw requestError(400, `${name} must be a JSON object`, 'BAD_REQUEST')
  return parsed ?? undefined
}

/** A JSON object in a body field; null and absent are no object. */
const jsonObjectField = (value: unknown, name: string): Record<string, unknown> | undefined => {
  if (value === undefined || value === null) return undefined
  if (!isPlainObject(value)) throw requestError(400, `${name} must be a JSON object`, 'VALIDATION_FAILED')
  return value
}

/**
 * The parameters of GraphQL over HTTP: `query`, `variables`,
 * `operationName`, `extensions`, from a GET query string (`variables` and
 * `extensions` as JSON text) or a POST body sent as application/json.
 * Refuses what cannot be one request (400): no query, a batch (a JSON
 * array), values of the wrong type. `extensions` is read and not used.
 */
export const readParams = (request: FastifyRequest): OperationParams => {
  let params: Record<string, unknown>
  let variables: Record<string, unknown> | undefined
  if (request.method === 'POST') {
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (contentType !== 'application/json') throw requestError(400, 'the body must be JSON, sent as application/json', 'UNSUPPORTED_CONTENT_TYPE')
    const body = request.body ?? {}
    if (Array.isArray(body)) throw requestError(400, 'batched operations are not accepted: send one per request', 'VALIDATION_FAILED')
    if (!isPlainObject(body)) throw requestError(400, 'the body must be a JSON object: { query, variables, operationName, extensions }', 'VALIDATION_FAILED')
    params = body
    variables = jsonObjectField(params.variables, 'variables')
    jsonObjectField(params.extensions, 'extensions')
  } else {
    params = isPlainObject(request.query) ? request.query : {}
    variables = jsonObjectParam(params.variables, 'variables')
    jsonObjectParam(params.extensions, 'extensions')
  }
  const { query, operationName } = params
  if (query === undefined || query === null || (typeof query === 'string' && query.trim() === '')) {
    throw requestError(400, 'query is required: the GraphQL document, as a string', 'BAD_REQUEST')
  }
  if (typeof query !== 'string') throw requestError(400, 'query must be a string: the GraphQL document', 'VALIDATION_FAILED')
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') {
    throw requestError(400, 'operationName must be a string', 'VALIDATION_FAILED')
  }
  return { source: query, variables, operationName: typeof operationName === 'string' && operationName !== '' ? operationName : undefined }
}

export interface HttpRouteOptions {
  pipeline: Pipeline
  useCases: UseCases
  /** The budgets the access hook charges: an operation's cost is charged there too. */
  limits: RateLimits
  /** The largest body an answer may have (MAX_RESPONSE_BYTES). */
  maxResponseBytes: number
}

/**
 * The body to send: the answer as JSON text, or, when it grew past
 * `maxResponseBytes` after all (its worst case was checked before it ran),
 * an error in its place, never the answer whole.
 */
const bodyWithin = (body: FormattedResult['body'], maxResponseBytes: number): string => {
  const text = typeof body === 'string' ? body : JSON.stringify(body)
  if (Buffer.byteLength(text) <= maxResponseBytes) return text
  const extensions = typeof body === 'string' ? undefined : body.extensions
  return JSON.stringify({
    data: null,
    errors: [{ message: new ResponseTooLarge(maxResponseBytes).message, extensions: { code: 'RESPONSE_TOO_LARGE' } }],
    ...(extensions === undefined ? {} : { extensions })
  })
}

/**
 * GET and POST /graphql, the HTTP door of the pipeline (pipeline.ts): the
 * media type negotiated (406 when the client accepts neither), the request
 * read, the operation run as the caller the access hook authenticated and
 * charged to that caller's budget, the result answered in that media type. Refusals are thrown to the scope's
 * error handler, which answers them in GraphQL shape.
 */
export const httpRoutes = ({ pipeline, useCases, limits, maxResponseBytes }: HttpRouteOptions): { get: RouteOptions, post: RouteOptions } => {
  const handler = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const type = negotiate(request.headers.accept)
    if (type === undefined) {
      throw requestError(406, 'this endpoint answers application/graphql-response+json or application/json', 'NOT_ACCEPTABLE')
    }
    const params = readParams(request)
    const caller = callerOf(request)
    const { status, body } = await pipeline.run({ ...params, door: request.method === 'POST' ? 'POST' : 'GET', caller }, {
      context: createContext({ useCases, caller, requestId: request.id, maxResponseBytes }),
      log: request.log,
      // The RateLimit-* headers show the budget after the charge.
      pay: (units) => limits.charge(request, reply, caller, units)
    })
    return reply.code(status).header('content-type', contentTypeOf(type)).send(bodyWithin(body, maxResponseBytes))
  }
  const route = { url: '/graphql', config: { operation: 'graphql' as const }, handler }
  return { get: { ...route, method: 'GET' }, post: { ...route, method: 'POST' } }
}
