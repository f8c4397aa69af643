import type { KeyRevocations, UseCases } from '@people-service/domain'
import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler, preValidationAsyncHookHandler } from 'fastify'
import { getOperationAST, GraphQLError, parse, type DocumentNode, type GraphQLSchema } from 'graphql'
import mercurius from 'mercurius'
import type { Access } from '../plugins/access.js'
import { registerGraphiQL } from '../plugins/graphiql.js'
import { checkArguments } from './argument-limits.js'
import { assertEveryRootFieldGoverned, coercedVariables, deniedFields, fragmentsOf, rootTypesOf, selectedFields } from './authorization.js'
import { createContextFields, type GraphQLContext } from './context.js'
import { costOf, costTooHighError } from './cost.js'
import { errorFormatter, errorHandler, formatSocketError, GraphQLRequestError, requestError } from './error-format.js'
import { checkDocumentSource, documentRules, GRAPHQL_LIMITS } from './limits.js'
import { createLoaders } from './loaders.js'
import type { MessageBus } from './message-bus.js'
import { resolvers } from './resolvers.js'
import { schema } from './schema.js'
import { fairFanOut } from './subscriptions/fair-fan-out.js'
import { installSocketSessions, type SubscriptionSettings } from './subscriptions/socket-sessions.js'
import { contentTypeOf, negotiate } from './transport.js'

export interface GraphQLOptions {
  useCases: UseCases
  /** Authenticates subscriptions and counts them; the HTTP requests are the access hook's. */
  access: Access
  /** Announces revoked credentials; open WebSocket connections are checked anew when it changes. */
  revocations: KeyRevocations
  messageBus: MessageBus
  /** The init deadline, the per-caller cap and the credential check interval of WebSocket connections. */
  subscriptions: SubscriptionSettings
  /** Introspection, GraphiQL and "Did you mean" suggestions off. */
  production: boolean
  /** Worst-case cost budget of one operation (cost.ts). */
  maxCost: number
  /** Compile a query with graphql-jit once it has been seen this many times; false: never. */
  jit: number | false
}

interface GraphQLParams { query?: unknown, variables?: unknown, operationName?: unknown }

const paramsOf = (request: FastifyRequest): GraphQLParams => {
  const source = request.method === 'POST' ? request.body : request.query
  return typeof source === 'object' && source !== null ? source : {}
}

const operationNameOf = (request: FastifyRequest): string | undefined => {
  const { operationName } = paramsOf(request)
  return typeof operationName === 'string' && operationName !== '' ? operationName : undefined
}

const isPlainObject = (value: unknown): boolean => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * Checks what Mercurius takes on trust, before it parses anything: the
 * negotiated media type, a JSON body, a query that is a string, variables
 * that are an object.
 */
const checkRequest: preHandlerAsyncHookHandler = async (request, reply) => {
  // A WebSocket upgrade to /graphql speaks graphql-ws, not HTTP GraphQL.
  if (request.headers.upgrade?.toLowerCase() === 'websocket') return
  const type = negotiate(request.headers.accept)
  if (type === undefined) {
    throw requestError(406, 'this endpoint answers application/graphql-response+json or application/json', 'NOT_ACCEPTABLE')
  }
  reply.header('content-type', contentTypeOf(type))
  // Mercurius' schema for the 2xx body would write error path indexes as
  // strings; plain JSON keeps them numbers, as the GraphQL spec wants.
  reply.serializer(JSON.stringify)
  // Mercurius attaches schema errors (a query that is not a string, a batch
  // array) and would run on; they are refused here with their message.
  if (request.validationError) throw requestError(400, request.validationError.message, 'VALIDATION_FAILED')
  if (request.method === 'POST') {
    const contentType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase()
    if (contentType !== 'application/json') {
      throw requestError(400, 'the body must be JSON, sent as application/json', 'UNSUPPORTED_CONTENT_TYPE')
    }
  }
  const { query, variables } = paramsOf(request)
  if (typeof query !== 'string' || query.trim() === '') {
    throw requestError(400, 'query is required: the GraphQL document, as a string', 'BAD_REQUEST')
  }
  if (request.method !== 'POST' && typeof variables === 'string') {
    let parsed: unknown
    try {
      parsed = JSON.parse(variables)
    } catch {
      throw requestError(400, 'variables must be a JSON object', 'BAD_REQUEST')
    }
    if (parsed !== null && !isPlainObject(parsed)) throw requestError(400, 'variables must be a JSON object', 'BAD_REQUEST')
  }
}

/**
 * GraphQL over HTTP lets `extensions` be null, as `variables` may be;
 * Mercurius' body schema only takes an object, so null is dropped first.
 */
const allowNullExtensions: preValidationAsyncHookHandler = async (request) => {
  const body = request.body
  if (typeof body === 'object' && body !== null && 'extensions' in body && body.extensions === null) delete body.extensions
}

const asRequestError = (error: unknown): never => {
  if (error instanceof GraphQLError) throw new GraphQLRequestError(400, [error])
  throw error
}

/** Subscriptions have their own door; over HTTP they would run as nothing. */
const subscriptionOverHttp = (method: string): GraphQLRequestError => method === 'POST'
  ? requestError(400, 'subscriptions are served over WebSocket at /graphql (graphql-ws protocol), not over HTTP', 'SUBSCRIPTION_OVER_HTTP')
  : requestError(405, 'subscriptions are served over WebSocket at /graphql (graphql-ws protocol), not over HTTP', 'METHOD_NOT_ALLOWED', { allow: 'GET, HEAD, POST' })

/**
 * The last checks before any resolver runs: no subscription, and no mutation
 * but over POST (Mercurius checks GET only, and HEAD runs the GET route),
 * then every selected field against the policy table for the caller (403,
 * nothing runs), then arguments against their limits and the worst-case
 * cost, with the request's variables (400).
 */
const checkBeforeExecution = (maxCost: number) =>
  async (schema: GraphQLSchema, document: DocumentNode, context: GraphQLContext, variables: Record<string, unknown> | undefined): Promise<void> => {
    const operation = getOperationAST(document, context.operationName)
    if (operation?.operation === 'subscription') throw subscriptionOverHttp(context.reply.request.method)
    if (context.reply.request.method !== 'POST' && operation?.operation !== 'query') {
      throw requestError(405, 'a mutation changes data and is only accepted over POST', 'METHOD_NOT_ALLOWED', { allow: 'POST' })
    }
    if (operation) {
      // Variables are checked here, once: the cost below is remembered per
      // document and would not report them again.
      let coerced: Record<string, unknown> | undefined
      try {
        coerced = coercedVariables(schema, operation, variables)
      } catch (error) {
        asRequestError(error)
      }
      const fields = selectedFields(schema, operation, fragmentsOf(document.definitions), coerced)
      const denied = deniedFields(context.caller, fields, rootTypesOf(schema))
      if (denied.length > 0) {
        throw new GraphQLRequestError(denied.some((e) => e.extensions.code === 'UNAUTHENTICATED') ? 401 : 403, denied)
      }
      try {
        checkArguments(schema, document, context.operationName, coerced)
      } catch (error) {
        asRequestError(error)
      }
    }
    let cost = 0
    try {
      cost = costOf({ schema, document, variables, operationName: context.operationName })
    } catch (error) {
      asRequestError(error)
    }
    if (cost > maxCost) throw new GraphQLRequestError(400, [costTooHighError(cost, maxCost)])
  }

/**
 * On GET, an operationName that selects no operation is refused: Mercurius
 * would fail on it with a TypeError while looking for mutations. Returns
 * whether the source passed: false when it does not parse (Mercurius then
 * reports the syntax error).
 */
const selectsAnOperation = (source: string, operationName: string | undefined): boolean => {
  let document: DocumentNode
  try {
    document = parse(source, { maxTokens: GRAPHQL_LIMITS.maxTokens })
  } catch {
    return false
  }
  const operation = getOperationAST(document, operationName)
  if (!operation) {
    throw requestError(400, operationName === undefined
      ? 'the document has several operations: say which to run with operationName'
      : `the document has no operation named ${JSON.stringify(operationName)}`, 'GRAPHQL_VALIDATION_FAILED')
  }
  // Mercurius refuses it as a mutation; the client should hear where subscriptions are.
  if (operation.operation === 'subscription') throw subscriptionOverHttp('GET')
  return true
}

// Clients send the same few documents again and again: a GET source that
// passed is remembered (a second parse per request otherwise), within bounds.
// A POST costs only the JSON probe, which gives up within a few characters.
const REMEMBERED_SOURCES = 1000
const REMEMBERED_SOURCE_LENGTH = 8192

/** The document's text checks (limits.ts) and a GET's operationName. */
const checkSource = () => {
  const passed = new Set<string>()
  return async (_schema: GraphQLSchema, source: string, context: GraphQLContext): Promise<void> => {
    const key = context.reply.request.method === 'POST' ? undefined : `${JSON.stringify(context.operationName ?? null)} ${source}`
    if (key !== undefined && passed.has(key)) return
    try {
      checkDocumentSource(source)
    } catch (error) {
      asRequestError(error)
    }
    if (key === undefined || !selectsAnOperation(source, context.operationName) || source.length > REMEMBERED_SOURCE_LENGTH) return
    if (passed.size >= REMEMBERED_SOURCES) passed.clear()
    passed.add(key)
  }
}

export const registerGraphQL = async (app: FastifyInstance, options: GraphQLOptions): Promise<void> => {
  const { useCases, access, revocations, messageBus, production, maxCost, jit } = options
  const validationRules = documentRules(production)

  // An own scope: Mercurius sets error handlers and content-type parsers that
  // must not reach the REST routes.
  await app.register(async (scope) => {
    // Before Mercurius registers its route: sessions wrap its WebSocket handler.
    const sockets = installSocketSessions(scope, {
      access,
      revocations,
      // The executable schema exists once Mercurius is registered, before any connection.
      rules: { get schema () { return scope.graphql.schema }, validationRules, maxCost },
      settings: options.subscriptions,
      format: formatSocketError(production)
    })
    await scope.register(mercurius, {
      schema,
      // Typed in resolvers.ts; Mercurius' own resolver type is a loose record.
      resolvers: resolvers as unknown as mercurius.IResolvers,
      loaders: createLoaders(useCases) as mercurius.MercuriusLoaders,
      path: '/graphql',
      // GraphiQL is served from the service's own assets (plugins/graphiql.ts).
      graphiql: false,
      ...(jit === false ? {} : { jit }),
      allowBatchedQueries: false,
      validationRules,
      graphql: { parseOptions: { maxTokens: GRAPHQL_LIMITS.maxTokens } },
      // The app-level access hook has authenticated the request already.
      // Not callerOf: Mercurius also builds a context to answer a request the
      // hook refused, and a throw there would lose the GraphQL error shape.
      context: (request: FastifyRequest) => createContextFields({
        useCases,
        caller: request.caller,
        requestId: request.id,
        operationName: operationNameOf(request),
        maxCost
      }),
      subscription: {
        emitter: fairFanOut(messageBus.emitter),
        // No headers on a WebSocket: the caller comes from the connection-init
        // payload, authenticated by the connection's session before
        // Mercurius hears of it (subscriptions/socket-session.ts).
        context: (_socket, request: FastifyRequest) => createContextFields({
          useCases,
          caller: sockets.callerOf(request),
          requestId: request.id,
          operationName: undefined,
          maxCost
        })
      },
      errorFormatter: errorFormatter(production) as NonNullable<mercurius.MercuriusOptions['errorFormatter']>,
      errorHandler: errorHandler(production),
      additionalRouteOptions: { preValidation: allowNullExtensions, preHandler: checkRequest }
    })

    // Nothing reachable by omission: every root field has a row in the table.
    assertEveryRootFieldGoverned(scope.graphql.schema)
    scope.graphql.addHook('preParsing', checkSource())
    scope.graphql.addHook('preExecution', checkBeforeExecution(maxCost))
    // A subscribe was checked in full by its connection's session; it runs
    // as the caller that session authenticated for it, scopes as of now.
    scope.graphql.addHook<GraphQLContext & { request: FastifyRequest }>('preSubscriptionExecution', async (_schema, _document, context) => {
      context.caller = sockets.callerOf(context.request)
    })
  })
  if (!production) await registerGraphiQL(app)
}
