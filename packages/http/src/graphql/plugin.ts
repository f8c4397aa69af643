import type { KeyRevocations, UseCases } from '@people-service/domain'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { buildSchema } from 'graphql'
import mercurius from 'mercurius'
import subscriptionRoute from 'mercurius/lib/subscription.js'
import type { Access } from '../plugins/access.js'
import { registerGraphiQL, registerGraphiQLOff } from '../plugins/graphiql.js'
import { assertEveryRootFieldGoverned } from './authorization.js'
import { createContext, type SubscriptionContext } from './context.js'
import { assertEveryFieldPriced } from './cost.js'
import { errorFormatter, errorHandler, formatSocketError } from './error-format.js'
import { httpRoutes } from './http-route.js'
import { documentRules } from './limits.js'
import type { MessageBus } from './message-bus.js'
import { createPipeline } from './pipeline.js'
import type { Tracing } from '../tracing.js'
import { QueryCompiler } from './plan.js'
import { resolvers } from './resolvers.js'
import { schema as schemaText } from './schema.js'
import { fairFanOut } from './subscriptions/fair-fan-out.js'
import { installSocketSessions, type SubscriptionSettings } from './subscriptions/socket-sessions.js'

export interface GraphQLOptions {
  useCases: UseCases
  /** Authenticates subscriptions and counts them; the HTTP requests are the access hook's. */
  access: Access
  /** Read once a second by the check of open WebSocket connections (subscriptions/credential-watch.ts). */
  revocations: KeyRevocations
  messageBus: MessageBus
  /** The init deadline, the per-caller cap and the credential check interval of WebSocket connections. */
  subscriptions: SubscriptionSettings
  /** Introspection, GraphiQL and "Did you mean" suggestions off. */
  production: boolean
  /** Worst-case cost budget of one operation (cost.ts). */
  maxCost: number
  /** The largest response an operation may build (MAX_RESPONSE_BYTES). */
  maxResponseBytes: number
  /** Compile an operation with graphql-jit once it has run this many times; false: never. */
  jit: number | false
  /** Queries of people and friends as one statement per root field that builds the JSON (sql-plan.ts). */
  sqlPlan: boolean
  /** A span per operation run over HTTP, when tracing is on. */
  tracing?: Tracing
}

/**
 * /graphql: queries and mutations over HTTP through the service's own
 * pipeline (pipeline.ts, http-route.ts); subscriptions over WebSocket
 * through Mercurius, each subscribe checked by the same pipeline first
 * (subscriptions/). Mercurius attaches the resolvers to the schema both
 * run, and serves the WebSocket protocols; its HTTP routes are off, since
 * every request would pay for hooks, a second coercion of its variables
 * and loaders keyed by whole parent objects.
 */
export const registerGraphQL = async (app: FastifyInstance, options: GraphQLOptions): Promise<void> => {
  const { useCases, access, revocations, messageBus, production, maxCost, maxResponseBytes, jit, sqlPlan, tracing } = options
  // One executable schema: Mercurius attaches the resolvers to it when it registers.
  const schema = buildSchema(schemaText)
  // Nothing reachable by omission: every root field has a row in the table.
  assertEveryRootFieldGoverned(schema)
  // Nothing unpriced: every list has a limit, every leaf a worst-case size.
  assertEveryFieldPriced(schema)
  const compiler = jit === false ? false : new QueryCompiler(jit)
  const pipeline = createPipeline({ schema, validationRules: documentRules(production), maxCost, maxResponseBytes, jit: compiler, sqlPlan, production, ...(tracing === undefined ? {} : { tracing }) })

  // An own scope: the error handler answers in GraphQL shape on /graphql only.
  await app.register(async (scope) => {
    scope.setErrorHandler(errorHandler(production))
    // Before the WebSocket route is registered: sessions wrap its handler.
    const sockets = installSocketSessions(scope, {
      access,
      revocations,
      check: (request) => pipeline.check(request),
      settings: options.subscriptions,
      format: formatSocketError(production)
    })
    await scope.register(mercurius, {
      schema,
      // Typed in resolvers.ts; Mercurius' own resolver type is a loose record.
      resolvers: resolvers as unknown as mercurius.IResolvers,
      routes: false,
      subscription: { emitter: fairFanOut(messageBus.emitter) }
    })
    const routes = httpRoutes({ pipeline, useCases, limits: access.limits, maxResponseBytes })
    scope.route(routes.post)
    // The GET route carries the WebSocket handler too: the same path serves both.
    await scope.register(subscriptionRoute, {
      getOptions: routes.get,
      subscriber: scope.graphql.pubsub,
      // No headers on a WebSocket: the caller comes from the connection-init
      // payload, authenticated by the connection's session before Mercurius
      // hears of it (subscriptions/socket-session.ts).
      subscriptionContextFn: (_socket, request) => createContext({ useCases, caller: sockets.callerOf(request), requestId: request.id }),
      errorFormatter: errorFormatter(production)
    })
    // A subscribe was checked in full by its connection's session; it runs
    // as the caller that session authenticated for it, scopes as of now, and
    // each of its events is charged to that caller's budget by the session.
    scope.graphql.addHook<SubscriptionContext & { request: FastifyRequest }>('preSubscriptionExecution', async (_schema, _document, context, id) => {
      context.caller = sockets.callerOf(context.request)
      context.admitEvent = () => sockets.admitEvent(context.request, String(id))
    })
  })
  if (production) registerGraphiQLOff(app)
  else await registerGraphiQL(app)
}
