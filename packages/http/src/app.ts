import { maxHeaderSize } from 'node:http'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createUseCases, type MessageEvents, type Ports, webhookUseCases } from '@people-service/domain'
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { GRAPHQL_LIMITS } from './graphql/limits.js'
import { inProcessMessageBus, type MessageBus } from './graphql/message-bus.js'
import { registerGraphQL } from './graphql/plugin.js'
import { SUBSCRIPTION_DEFAULTS, type SubscriptionSettings } from './graphql/subscriptions/socket-sessions.js'
import { installAccess, type AccessOptions } from './plugins/access.js'
import { clientErrorHandler } from './plugins/client-errors.js'
import { installClosingHeader } from './plugins/closing.js'
import { CONNECTION_DEFAULTS, type ConnectionLimits, limitConnections } from './plugins/connections.js'
import { answerBadUrl, installErrorHandling } from './plugins/errors.js'
import { installJsonBody } from './plugins/json-body.js'
import { installLimits, LIMITS } from './plugins/limits.js'
import { installRequestDurations, registerMetrics, type MetricsOptions } from './plugins/metrics.js'
import { registerOpenApi } from './plugins/openapi.js'
import { limitPipelining } from './plugins/pipelining.js'
import { installResponseHeaders, responseHeaders } from './plugins/response-headers.js'
import { registerCors, SECURITY_HEADERS } from './plugins/security-headers.js'
import { registerUnderPressure } from './plugins/under-pressure.js'
import { closeAnsweredUpgrades } from './plugins/upgrades.js'
import { trackMethods } from './plugins/method-not-allowed.js'
import { requestIdOf } from './plugins/request-id.js'
import { RESPONSE_LIMITS } from './response-size.js'
import { installValidation } from './plugins/validation.js'
import { apiKeysRoutes } from './routes/api-keys.routes.js'
import { authRoutes } from './routes/auth.routes.js'
import { friendsRoutes } from './routes/friends.routes.js'
import { healthRoutes } from './routes/health.routes.js'
import { rootRoutes } from './routes/root.routes.js'
import { messagesRoutes } from './routes/messages.routes.js'
import { peopleRoutes } from './routes/people.routes.js'
import { personRoutes } from './routes/person.routes.js'
import { usersRoutes } from './routes/users.routes.js'
import { eventsRoutes } from './routes/events.routes.js'
import { eventLogFigures } from './events/event-figures.js'
import type { EventWaitLimits } from './events/event-waits.js'
import { webhooksRoutes } from './routes/webhooks.routes.js'
import { ErrorSchema } from './schemas/error.schema.js'
import { MessageSchema } from './schemas/message.schemas.js'
import { PersonIdSchema, PersonSchema, PersonSummarySchema } from './schemas/person.schemas.js'
import type { Tracing } from './tracing.js'
import './types.js'

export interface AppOptions {
  ports: Ports
  /** Identity, authorization and limits: required, there is no unauthenticated mode. */
  access: AccessOptions
  /** Readiness of the dependencies (the database); defaults to always ready. */
  ready?: () => Promise<boolean>
  logger?: FastifyServerOptions['logger']
  /** Spans for requests, GraphQL operations and what they read (tracing.ts); unset: none. */
  tracing?: Tracing
  /** NODE_ENV=production: no introspection, GraphiQL or "Did you mean" suggestions. */
  production?: boolean
  /** Worst-case cost budget of one GraphQL operation; defaults to GRAPHQL_LIMITS.defaultMaxCost. */
  graphqlMaxCost?: number
  /**
   * The largest response body the service builds (MAX_RESPONSE_BYTES):
   * GraphQL refuses an operation that could answer more, REST lists end
   * their pages early. Default RESPONSE_LIMITS.defaultMaxBytes (8 MiB).
   */
  maxResponseBytes?: number
  /** Idempotency-Keys one account may hold within 24 hours (IDEMPOTENCY_KEYS_PER_DAY); undefined: IDEMPOTENCY.defaultRecordsPerOwner. */
  idempotencyKeysPerDay?: number
  /**
   * Compile a GraphQL query with graphql-jit once it has run this many times;
   * false: never. Default GRAPHQL_LIMITS.jitAfter (`npm run bench` measures both).
   */
  graphqlJit?: number | false
  /**
   * Queries of people and friends the database can answer whole run as one
   * statement per root field that builds the JSON; false: always with the
   * resolvers. Default true.
   */
  graphqlSqlPlan?: boolean
  /**
   * WebSocket connections to /graphql: the `connection_init` deadline, live
   * subscriptions per caller, how often credentials are checked anew.
   * Defaults: SUBSCRIPTION_DEFAULTS (10 s, 20, 1 s).
   */
  subscriptions?: Partial<SubscriptionSettings>
  /**
   * Carries sent messages to GraphQL subscribers. The caller that passes one
   * also makes `ports.events` publish to it (the composition root does).
   * Without one, an in-process bus is made and fed from the use cases.
   */
  messageBus?: MessageBus
  /** Browser origins allowed by CORS; none by default. */
  corsOrigins?: string[]
  /**
   * The proxies whose X-Forwarded-For gives the client's address (Fastify's
   * trustProxy); none by default, so a client cannot pick its own address.
   */
  trustProxy?: false | string[]
  /** When requests get 503 + Retry-After: event-loop delay in ms (default 1000), sampled every `sampleInterval` ms (default 1000). */
  pressure?: { maxEventLoopDelay: number, sampleInterval?: number }
  /** Extra figures for GET /metrics. */
  metrics?: MetricsOptions
  /** Slow clients: the most a request's headers, and a whole request, may take (ms). */
  timeouts?: { headersMs: number, requestMs: number }
  /** Connections at once, in all and per client address (plugins/connections.ts). Default: CONNECTION_DEFAULTS. */
  connections?: Partial<ConnectionLimits>
  /** Requests waiting for events (GET /events?wait=): how many at once, how often they poll. Default: EVENT_WAIT_DEFAULTS. */
  eventWaits?: Partial<EventWaitLimits>
}

/** Publishes to both: the caller's port and the bus subscribers listen on. */
const teeEvents = (first: MessageEvents, second: MessageEvents): MessageEvents => ({
  async published (message) {
    await first.published(message)
    await second.published(message)
  }
})

/**
 * The bus GraphQL subscribers listen on, and the ports the use cases publish
 * through. A caller that passes a bus has made `ports.events` publish to it;
 * otherwise an in-process bus is made here (and closed with the app) and fed
 * beside the caller's own port, so tests and embedders get subscriptions too.
 */
const wireMessageBus = (app: FastifyInstance, options: AppOptions): { messageBus: MessageBus, ports: Ports } => {
  if (options.messageBus !== undefined) return { messageBus: options.messageBus, ports: options.ports }
  const messageBus = inProcessMessageBus()
  app.addHook('onClose', () => messageBus.close())
  return { messageBus, ports: { ...options.ports, events: teeEvents(options.ports.events, messageBus.events) } }
}

/** Builds the whole HTTP application. Never listens: the caller decides where. */
export const buildApp = async (options: AppOptions): Promise<FastifyInstance> => {
  const { ready = async () => true, logger = false, production = false } = options
  const setResponseHeaders = responseHeaders(SECURITY_HEADERS)
  const app = Fastify({
    logger,
    bodyLimit: LIMITS.bodyBytes,
    genReqId: requestIdOf,
    // No cap of the router's own on a path segment (find-my-way's default is
    // 100 characters): Node's parser bounds the request line, and a segment
    // too long to be an id reaches its route, which authenticates the caller
    // before it answers 404. A cap here answered 404 before any credentials
    // were asked for, telling anyone which routes exist.
    routerOptions: { maxParamLength: maxHeaderSize },
    // A client that trickles its request in holds a socket: bounded, and
    // checked every second rather than Node's default 30 s.
    requestTimeout: options.timeouts?.requestMs ?? 30_000,
    // A client that stops reading holds the answers it asked for (a review's
    // 30 connections of 16 pipelined 2 MB inboxes each: +757 MB): a socket
    // with nothing read or written for as long as a request may take goes.
    connectionTimeout: options.timeouts?.requestMs ?? 30_000,
    http: { headersTimeout: options.timeouts?.headersMs ?? 10_000, connectionsCheckingInterval: 1000 },
    frameworkErrors: answerBadUrl(setResponseHeaders),
    clientErrorHandler: clientErrorHandler(SECURITY_HEADERS),
    trustProxy: options.trustProxy ?? false,
    // Traced, a request's lines are logged once its span exists, so that each carries its trace id.
    ...(options.tracing === undefined ? {} : { logController: new LogController({ disableRequestLogging: true }) })
  }).withTypeProvider<TypeBoxTypeProvider>()
  if (options.tracing !== undefined) await options.tracing.register(app)

  limitConnections(app.server, { ...CONNECTION_DEFAULTS, ...options.connections }, options.trustProxy ?? false)
  limitPipelining(app.server)
  closeAnsweredUpgrades(app)
  app.decorateRequest('caller', undefined)
  installJsonBody(app)
  installValidation(app)
  installErrorHandling(app)
  installResponseHeaders(app, setResponseHeaders)
  installLimits(app)
  installClosingHeader(app)
  // Before any route (CORS' catch-all OPTIONS, the docs' and /metrics
  // included): its onRoute check must see every one of them, and gives each
  // its own hook.
  const access = await installAccess(app, options.ports, options.access)
  // Before any route as well: the docs', /metrics' and CORS' get their 405s too.
  const methods = trackMethods(app)
  // Before any route too, so that every route gets its latency series.
  const durations = installRequestDurations(app)
  await registerCors(app, { origins: options.corsOrigins ?? [] })
  await registerUnderPressure(app, options.pressure ?? { maxEventLoopDelay: 1000 })
  await registerOpenApi(app)
  await registerMetrics(app, durations, { eventLog: eventLogFigures(options.ports.changeFeed, options.ports.clock), ...options.metrics })
  for (const schema of [ErrorSchema, PersonSchema, PersonIdSchema, PersonSummarySchema, MessageSchema]) app.addSchema(schema)

  const { messageBus, ports } = wireMessageBus(app, options)
  const useCases = createUseCases(ports, { recordsPerOwner: options.idempotencyKeysPerDay })
  await app.register(rootRoutes)
  await app.register(healthRoutes, { ready })
  await app.register(authRoutes, { access })
  await app.register(usersRoutes, { access })
  await app.register(apiKeysRoutes, { access })
  const maxResponseBytes = options.maxResponseBytes ?? RESPONSE_LIMITS.defaultMaxBytes
  await app.register(peopleRoutes, { useCases, access, maxResponseBytes })
  await app.register(personRoutes, { useCases })
  await app.register(friendsRoutes, { useCases })
  await app.register(messagesRoutes, { useCases, maxResponseBytes })
  await app.register(eventsRoutes, { ports, ...(options.eventWaits === undefined ? {} : { waits: options.eventWaits }) })
  await app.register(webhooksRoutes, { webhooks: webhookUseCases(ports) })
  await registerGraphQL(app, {
    useCases,
    access,
    revocations: ports.revocations,
    messageBus,
    subscriptions: { ...SUBSCRIPTION_DEFAULTS, ...options.subscriptions },
    production,
    maxCost: options.graphqlMaxCost ?? GRAPHQL_LIMITS.defaultMaxCost,
    maxResponseBytes,
    jit: options.graphqlJit ?? GRAPHQL_LIMITS.jitAfter,
    sqlPlan: options.graphqlSqlPlan ?? true,
    ...(options.tracing === undefined ? {} : { tracing: options.tracing })
  })
  methods.close()

  return app
}
