import { randomBytes } from 'node:crypto'
import {
  aesGcmWebhookSecretBox, localKeyRevocations, scryptPasswordHasher, systemClock, uuidv7Generator, webhookSealingKey,
  type KeyRevocations, type MessageEvents, type PasswordHasher
} from '@people-service/domain'
import { buildApp, inProcessMessageBus, LOG_SERIALIZERS, messageBusOver, REDACTED_LOG_PATHS, SUBSCRIPTION_DEFAULTS } from '@people-service/http'
import {
  connectRedis, createRepositories, DISPATCHER_DEFAULTS, migrateToLatest, openRedis, ping, redisKeyRevocations, redisMessageEmitter, sharedSetting,
  webhookDestinations, webhookDispatcher, webhookRelay, type Redis
} from '@people-service/infra'
import type { Config } from './config.js'
import { startEventPruning } from './event-pruning.js'
import { defaultMaxConnections, openFileLimit } from './open-files.js'
import { openDatabase } from './open-database.js'
import { setTraceHeaders } from './trace-context.js'

/**
 * Subscriptions are a live feed: the message is stored before it is
 * announced, so a broker that is away must not fail (or hold) the send.
 */
const liveFeedOnly = (events: MessageEvents, onError: (error: unknown) => void): MessageEvents => ({
  async published (message) {
    await events.published(message).catch(onError)
  }
})

/** How soon a revocation holds on every instance (docs/API.md, "Identity and authentication"). */
const CONTRACT_REVOCATION_MS = 5_000

/**
 * A credential cache this long or longer takes a revocation on another
 * instance that is never announced past the contract: the cache's TTL, and
 * the tick of an open WebSocket connection's next check, leave nothing for
 * the check itself.
 */
const TTL_PAST_CONTRACT_MS = CONTRACT_REVOCATION_MS - SUBSCRIPTION_DEFAULTS.credentialCheckMs

export interface RunningServer {
  app: Awaited<ReturnType<typeof buildApp>>
  /** Stops taking connections, lets in-flight requests finish, stores pending usage, closes the database. */
  close(): Promise<void>
}

export interface StartOptions {
  /** Where logs go (default stdout); tests capture them here. */
  logStream?: { write(line: string): void }
  /** Default: scrypt with the documented parameters. */
  passwords?: PasswordHasher
}

/** Opens and migrates the database, builds the app and listens: the composition root. */
export const startServer = async (config: Config, options: StartOptions = {}): Promise<RunningServer> => {
  // Loaded only when asked for: untraced, no OpenTelemetry module is imported.
  const tracing = config.tracing ? await (await import('./tracing.js')).startTracing() : undefined
  if (tracing !== undefined) setTraceHeaders(() => tracing.headers())
  const database = openDatabase({
    url: config.databaseUrl,
    poolSize: config.databasePoolSize,
    sqliteSynchronous: config.sqliteSynchronous,
    sqliteMmapMb: config.sqliteMmapMb,
    ...(tracing === undefined ? {} : { log: tracing.statements(config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgresql') })
  })
  let redis: Redis | undefined
  try {
    await migrateToLatest(database)
  } catch (error) {
    await database.close()
    throw error
  }
  // Redis problems are reported where they matter (rate limits, key
  // revocations); the app's logger does not exist yet, so early ones wait.
  const logger: { warn?: (message: string, error: unknown) => void } = {}
  let redisReachable = true
  let revocations: KeyRevocations & { close?(): void } = localKeyRevocations()
  if (config.redisUrl !== undefined) {
    redis = openRedis(config.redisUrl)
    tracing?.traceRedis(redis)
    redisReachable = await connectRedis(redis)
    revocations = redisKeyRevocations(redis, config.redisKeyPrefix, {
      onAnnounceFailed: (error) => logger.warn?.('a revoked API key could not be announced through Redis yet; retrying every second', error)
    })
  }
  // Outside production a secret is made once and kept in the database, so
  // restarts and several local instances accept each other's tokens.
  const jwtSecret = config.jwtSecret ?? await sharedSetting(database, 'jwt_secret', () => randomBytes(48).toString('base64url'))

  // Sent messages reach subscribers through this bus: in process, or through
  // Redis so that a subscriber on one instance hears a message sent on another.
  const messageBus = config.redisUrl === undefined
    ? inProcessMessageBus()
    : messageBusOver(redisMessageEmitter(config.redisUrl, config.redisKeyPrefix, (error) => logger.warn?.('the subscription channel to Redis failed; reconnecting', error)))
  const ports = {
    ...createRepositories(database, { eventSource: config.eventSource }),
    passwords: options.passwords ?? scryptPasswordHasher(),
    revocations,
    clock: systemClock,
    ids: uuidv7Generator(),
    events: liveFeedOnly(messageBus.events, (error) => logger.warn?.('a sent message could not be announced to subscribers', error)),
    webhookSecrets: aesGcmWebhookSecretBox(webhookSealingKey(config.webhookSecretKey ?? jwtSecret)),
    webhookDestinations: webhookDestinations({ allowPrivate: config.webhookAllowPrivate })
  }
  // Attempts run beside the API; their log lines go through the app's logger once it exists.
  const webhookLog = { warn: (object: Record<string, unknown>, message: string) => app.log.warn(object, message), error: (object: Record<string, unknown>, message: string) => app.log.error(object, message) }
  const dispatcher = webhookDispatcher({
    db: database.db,
    dialect: database.dialect,
    secrets: ports.webhookSecrets,
    clock: systemClock,
    settings: { ...DISPATCHER_DEFAULTS, ...config.webhookDelivery, allowPrivate: config.webhookAllowPrivate },
    log: webhookLog
  })
  // The event log, turned into deliveries in its order; the dispatcher is woken for them.
  const relay = webhookRelay({
    db: database.db,
    dialect: database.dialect,
    feed: ports.changeFeed,
    clock: systemClock,
    ids: ports.ids,
    settings: { batch: 200, pollMs: config.webhookDelivery.pollMs, retryWindowMs: config.webhookDelivery.retryWindowMs },
    onQueued: dispatcher.wake,
    log: webhookLog
  })
  const app = await buildApp({
    ports,
    access: {
      tokens: {
        secret: jwtSecret,
        ...(config.jwtPreviousSecret === undefined ? {} : { previousSecret: config.jwtPreviousSecret }),
        ttlSeconds: config.accessTokenTtlSeconds
      },
      limits: {
        max: config.rateLimitMax,
        windowMs: config.rateLimitWindowMs,
        loginMax: config.loginRateLimitMax,
        loginWindowMs: config.loginRateLimitWindowMs,
        publicMax: config.publicRateLimitMax,
        ...(redis === undefined ? {} : { redis, redisPrefix: config.redisKeyPrefix })
      },
      apiKeyCacheTtlMs: config.apiKeyCacheTtlMs,
      usageFlushIntervalMs: config.usageFlushIntervalMs,
      maxKeysPerAccount: config.maxKeysPerAccount,
      ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken })
    },
    messageBus,
    ...(tracing === undefined ? {} : { tracing }),
    production: config.production,
    graphqlMaxCost: config.graphqlMaxCost,
    maxResponseBytes: config.maxResponseBytes,
    idempotencyKeysPerDay: config.idempotencyKeysPerDay,
    graphqlJit: config.graphqlJit === 0 ? false : config.graphqlJit,
    graphqlSqlPlan: config.graphqlSqlPlan,
    subscriptions: { maxPerCaller: config.graphqlMaxSubscriptions },
    corsOrigins: config.corsOrigins,
    trustProxy: config.trustProxy,
    connections: {
      max: config.maxConnections ?? defaultMaxConnections(openFileLimit(), config.databasePoolSize),
      perAddress: config.maxConnectionsPerAddress
    },
    pressure: { maxEventLoopDelay: config.maxEventLoopDelay },
    metrics: { webhooks: dispatcher, ...(database.poolStats ? { poolStats: database.poolStats } : {}) },
    ready: () => ping(database),
    logger: {
      level: config.logLevel,
      redact: { paths: REDACTED_LOG_PATHS, censor: '[redacted]' },
      serializers: LOG_SERIALIZERS,
      ...(options.logStream === undefined ? {} : { stream: options.logStream })
    }
  })
  const pruning = startEventPruning({
    feed: ports.changeFeed,
    clock: ports.clock,
    retentionDays: config.eventRetentionDays,
    onError: (error) => app.log.warn({ err: error }, 'events older than EVENTS_RETENTION_DAYS could not be pruned; trying again in a minute')
  })
  // The delivery log is kept as long as the events it sent.
  const deliveryPruning = startEventPruning({
    feed: dispatcher,
    clock: ports.clock,
    retentionDays: config.eventRetentionDays,
    onError: (error) => app.log.warn({ err: error }, 'webhook deliveries older than EVENTS_RETENTION_DAYS could not be pruned; trying again in a minute')
  })
  // onClose hooks run last-registered first, so this one runs before the
  // app's own: store the usage counted so far while the database is open.
  app.addHook('onClose', async () => {
    await pruning.stop()
    await deliveryPruning.stop()
    await relay.stop()
    await dispatcher.stop()
    await app.access.useCases.usageMeter.flush().catch((error: unknown) => {
      app.log.error({ err: error }, 'could not store the last API key usage counts before closing')
    })
    await messageBus.close()
    await database.close()
    revocations.close?.()
    if (redis !== undefined) redis.disconnect()
    await tracing?.shutdown().catch((error: unknown) => { app.log.warn({ err: error }, 'the last spans could not be sent') })
  })
  logger.warn = (message, error) => app.log.warn({ err: error }, message)

  if (config.jwtSecret === undefined) app.log.info('JWT_SECRET is unset: signing with the development secret kept in the database')
  if (config.apiKeyCacheTtlMs >= TTL_PAST_CONTRACT_MS) {
    app.log.warn(`API_KEY_CACHE_TTL_MS is ${config.apiKeyCacheTtlMs}: a revocation another instance cannot announce (no Redis, or Redis out of its reach) reaches this one within that and a second, past the contract's 5 s; less than ${TTL_PAST_CONTRACT_MS} keeps it`)
  }
  if (!redisReachable) app.log.warn('REDIS_URL does not answer yet: rate limits are off and API keys are read from the database until it does')

  const admin = await app.access.useCases.ensureAdmin({
    username: config.adminUsername,
    ...(config.adminPassword === undefined ? {} : { password: config.adminPassword })
  }).catch(async (error: unknown) => {
    await app.close()
    throw error
  })
  if (admin.generatedPassword !== undefined) {
    // The contract: printed once, at creation; it is never logged again.
    app.log.warn(`created the admin account "${config.adminUsername}" with the generated password ${admin.generatedPassword} (shown only this once)`)
  } else if (admin.created !== undefined) {
    app.log.info({ username: config.adminUsername }, 'created the admin account from ADMIN_USERNAME / ADMIN_PASSWORD')
  } else if (config.adminPassword !== undefined) {
    // The first start is long past: the environment never creates or resets an account again.
    app.log.warn({ username: config.adminUsername }, `ADMIN_PASSWORD is set but ignored: accounts exist, so the bootstrap admin "${config.adminUsername}" is neither created nor changed (change passwords through the API; a lost admin: npm run admin -- recover)`)
  }

  try {
    await app.listen({ host: config.host, port: config.port })
  } catch (error) {
    // A port in use: close the database too, so that a SQLite file keeps no -wal or -shm beside it.
    await app.close()
    throw error
  }
  relay.start()
  dispatcher.start()
  return { app, close: () => app.close() }
}
