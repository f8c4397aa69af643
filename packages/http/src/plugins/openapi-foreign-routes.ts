import { Type } from '@sinclair/typebox'
import { GRAPHQL_EXAMPLES, GraphQLBodySchema, GraphQLQueryString, GraphQLResponseSchema } from '../schemas/graphql-http.schemas.js'
import type { DocumentedSchema } from './openapi.js'

const GRAPHQL_MEDIA_TYPES = ['application/graphql-response+json', 'application/json']

/** A GraphQL over HTTP response: the same body under either media type the client accepts. */
const graphqlResponse = (description: string, example: unknown, headers: Record<string, unknown> = {}) => ({
  description,
  headers,
  content: Object.fromEntries(GRAPHQL_MEDIA_TYPES.map((type) => [type, { schema: Type.Ref(GraphQLResponseSchema), example }]))
})

const requestError = (description: string, code: string, message: string, headers: Record<string, unknown> = {}) =>
  graphqlResponse(description, GRAPHQL_EXAMPLES.error(code, message), headers)

const graphqlResponses = (method: 'GET' | 'POST') => ({
  200: graphqlResponse('The result: `data`, with `errors` beside it for the fields that failed', GRAPHQL_EXAMPLES.data),
  400: method === 'POST'
    ? requestError('The request was refused before anything ran: it does not parse or validate, is too deep, too costly, or malformed, ' +
      'an argument is out of its limits, or it is a subscription (SUBSCRIPTION_OVER_HTTP: subscriptions are served over WebSocket)', 'GRAPHQL_VALIDATION_FAILED', 'Cannot query field "nmae" on type "Person".')
    : requestError('The request was refused before anything ran: it does not parse or validate, is too deep, too costly, or malformed, ' +
      'or an argument is out of its limits', 'GRAPHQL_VALIDATION_FAILED', 'Cannot query field "nmae" on type "Person".'),
  401: requestError('No valid credentials', 'UNAUTHENTICATED', 'credentials are required: Authorization: Bearer <token> or X-API-Key: <key>', { 'WWW-Authenticate': { type: 'string', description: 'Bearer realm="people-service"' } }),
  403: requestError('A selected field needs a scope the caller lacks: nothing ran', 'FORBIDDEN', 'Mutation.createPerson needs the people:write scope'),
  ...(method === 'GET'
    ? {
        405: requestError('A mutation over GET (send it with POST), or a subscription (served over WebSocket at this path, never over HTTP)',
          'METHOD_NOT_ALLOWED', 'a mutation changes data and is only accepted over POST',
          { Allow: { type: 'string', description: '`POST` for a mutation; `GET, HEAD, POST` for a subscription' } })
      }
    : {}),
  406: requestError('The Accept header allows neither application/graphql-response+json nor application/json', 'NOT_ACCEPTABLE', 'this endpoint answers application/graphql-response+json or application/json'),
  429: graphqlResponse('The caller\'s budget is spent, or cannot pay for this operation\'s cost: nothing ran. When it was the cost, ' +
    '`extensions.cost` says what the operation asked, and `charged: 1`: only the request itself was counted', {
    ...GRAPHQL_EXAMPLES.error('RATE_LIMITED', 'rate limit exceeded for this account: 1000 requests per 60 s; this costs 30 and 12 are left; retry in 42 s'),
    extensions: { cost: { requested: 3100, charged: 1 } }
  }, { 'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' } }),
  500: requestError('An unexpected failure', 'INTERNAL', 'something went wrong on our side; quote request id 0192f6c4-0000-7000-8000-000000000000 when reporting it')
})

const GRAPHQL_DESCRIPTION = 'GraphQL over HTTP. Subscriptions are served over WebSocket at the same path (graphql-ws protocol, ' +
  'credentials in the connection-init payload); sent over HTTP they are refused (400 over POST, 405 over GET). Documents are at most 32,768 characters. Each operation counts as `max(1, ceil(cost / 100))` requests against the caller\'s budget, ' +
  'charged before it runs; `extensions.cost` says `{ requested, charged }`. Over WebSocket the connection counts one request, every message after ' +
  '`connection_init` (ping, pong, complete, subscribe) one request before it is read, and a subscription ' +
  'its cost on subscribe and again for every event it receives, before its selection runs (an event past the budget ends it with RATE_LIMITED). ' +
  'Past the budget a message is not parsed: a subscribe gets RATE_LIMITED, a complete still ends its subscription, anything else goes ' +
  'unanswered; the ninth such message, or one over 64 KiB, drops the connection. Subscription ids are at most 128 characters.'

const page = (description: string, example: string) => ({
  description,
  content: { 'text/html': { schema: { type: 'string' }, example } }
})

/**
 * The routes that cannot carry their documentation themselves: those other
 * plugins register (@fastify/swagger-ui, fastify-metrics), and /graphql,
 * whose requests the GraphQL routes read rather than a schema: what the
 * document shows for them, by method and URL (as ROUTE_OPERATIONS gives
 * their policy rows).
 */
export const FOREIGN_ROUTES: Readonly<Record<string, DocumentedSchema>> = {
  'GET /graphql': {
    operationId: 'queryGraphQL',
    tags: ['graphql'],
    summary: 'Run a GraphQL query (no mutations over GET)',
    description: GRAPHQL_DESCRIPTION,
    querystring: GraphQLQueryString,
    response: graphqlResponses('GET')
  },
  'POST /graphql': {
    operationId: 'executeGraphQL',
    tags: ['graphql'],
    summary: 'Run a GraphQL query or mutation',
    description: GRAPHQL_DESCRIPTION,
    body: GraphQLBodySchema,
    response: graphqlResponses('POST')
  },
  'GET /docs': {
    operationId: 'apiDocs',
    tags: ['docs'],
    summary: 'These docs, as an interactive page (Swagger UI, served with no outside assets)',
    response: { 200: page('The page', '<!DOCTYPE html><html lang="en">…</html>') }
  },
  'GET /metrics': {
    operationId: 'metrics',
    tags: ['operations'],
    summary: 'Prometheus metrics: requests by route and status, latency, process, database pool',
    response: {
      200: {
        description: 'Prometheus text exposition format',
        content: { 'text/plain': { schema: { type: 'string' }, example: 'http_request_duration_seconds_count{method="GET",route="/people",status_code="200"} 1\n' } }
      }
    }
  }
}
