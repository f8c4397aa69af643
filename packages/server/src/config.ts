import { compile as compileProxyAddresses } from '@fastify/proxy-addr'
import { CONNECTION_DEFAULTS, GRAPHQL_LIMITS, RESPONSE_LIMITS, SUBSCRIPTION_DEFAULTS } from '@people-service/http'
import { ACCOUNT_LIMITS, API_KEY_LIMITS, DEFAULT_EVENT_SOURCE, IDEMPOTENCY } from '@people-service/domain'
import { SQLITE_MAX_MMAP_MB } from '@people-service/infra'

/** The service's configuration, read once from the environment (see the README's table). */
export interface Config {
  host: string
  port: number
  databaseUrl: string
  databasePoolSize: number
  sqliteSynchronous: 'FULL' | 'NORMAL'
  /** MiB of the SQLite file read through a memory map (SQLITE_MMAP_MB); 0: none. */
  sqliteMmapMb: number
  logLevel: string
  production: boolean
  /** Worst-case cost budget of one GraphQL operation (GRAPHQL_MAX_COST). */
  graphqlMaxCost: number
  /** The largest response body the service builds (MAX_RESPONSE_BYTES). */
  maxResponseBytes: number
  /** Compile a GraphQL query with graphql-jit after this many runs; 0: never (GRAPHQL_JIT). */
  graphqlJit: number
  /** Queries of people and friends as one statement per root field (GRAPHQL_SQL_PLAN=0: always the resolvers). */
  graphqlSqlPlan: boolean
  /** Live GraphQL subscriptions per caller on one instance (GRAPHQL_MAX_SUBSCRIPTIONS). */
  graphqlMaxSubscriptions: number
  /** Browser origins allowed by CORS (CORS_ORIGINS, comma-separated). */
  corsOrigins: string[]
  /**
   * Which proxies' X-Forwarded-For to believe (TRUST_PROXY): false, or
   * addresses and ranges. It decides the client address the login limit
   * counts by.
   */
  trustProxy: false | string[]
  /** Connections at once (MAX_CONNECTIONS); undefined: what the open-file limit leaves (open-files.ts); 0: no limit. */
  maxConnections: number | undefined
  /** Connections at once from one client address, trusted proxies aside (MAX_CONNECTIONS_PER_ADDRESS); 0: no limit. */
  maxConnectionsPerAddress: number
  /** Event-loop delay in ms past which requests get 503 (MAX_EVENT_LOOP_DELAY_MS); 0: never. */
  maxEventLoopDelay: number
  /** Unset outside production: a secret is generated once and kept in the database. */
  jwtSecret: string | undefined
  /** The secret before a rotation, accepted (never used to sign) until removed. */
  jwtPreviousSecret: string | undefined
  accessTokenTtlSeconds: number
  adminUsername: string
  /** Unset: a password is generated and printed once when the admin is created. */
  adminPassword: string | undefined
  /** 0: per-caller limits are off. */
  rateLimitMax: number
  rateLimitWindowMs: number
  /** Requests per window (RATE_LIMIT_WINDOW_MS) per client address on public paths (PUBLIC_RATE_LIMIT_MAX); 0: off. */
  publicRateLimitMax: number
  /** Live API keys one account may own (MAX_KEYS_PER_ACCOUNT). */
  maxKeysPerAccount: number
  /** The CloudEvents `source` of every event (EVENTS_SOURCE). */
  eventSource: string
  /** Days an event is kept (EVENTS_RETENTION_DAYS). */
  eventRetentionDays: number
  /** Idempotency-Keys one account may hold within 24 hours (IDEMPOTENCY_KEYS_PER_DAY). */
  idempotencyKeysPerDay: number
  /** 0: the login limit is off. */
  loginRateLimitMax: number
  loginRateLimitWindowMs: number
  redisUrl: string | undefined
  /** Every Redis key of this deployment starts with it, so deployments can share a Redis. */
  redisKeyPrefix: string
  apiKeyCacheTtlMs: number
  usageFlushIntervalMs: number
  /** A bearer token that may read GET /metrics without an admin account (METRICS_TOKEN); unset: admins only. */
  metricsToken: string | undefined
  /** WEBHOOK_ALLOW_PRIVATE=true: webhooks may use http:// and private addresses (development, tests). */
  webhookAllowPrivate: boolean
  /** WEBHOOK_SECRET_KEY: what the webhooks' signing secrets are sealed under; unset: a key derived from the JWT secret. */
  webhookSecretKey: string | undefined
  /**
   * How deliveries are attempted and retried (WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_BASE_MS,
   * WEBHOOK_RETRY_MAX_MS, WEBHOOK_RETRY_WINDOW_MS, WEBHOOK_LEASE_MS, WEBHOOK_POLL_MS): the
   * contract's 10 s, 24 h and a minute's lease unless set; shorter for tests.
   */
  webhookDelivery: { timeoutMs: number, baseDelayMs: number, maxDelayMs: number, retryWindowMs: number, leaseMs: number, pollMs: number }
  /** Traces exported over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT set; the SDK reads the other OTEL_* itself). */
  tracing: boolean
}

export class ConfigError extends Error {
  constructor (variable: string, problem: string) {
    super(`${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

const integer = (env: Env, name: string, fallback: number, min: number, max: number): number => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw)}`)
  }
  return value
}

/** A CloudEvents `source`: a URI-reference, here any visible characters without spaces, at most 1,000. */
const eventSource = (env: Env): string => {
  const raw = env.EVENTS_SOURCE
  if (raw === undefined || raw === '') return DEFAULT_EVENT_SOURCE
  if (!/^[\x21-\x7e]{1,1000}$/.test(raw)) throw new ConfigError('EVENTS_SOURCE', 'must be a URI reference (visible ASCII, no spaces, at most 1,000 characters)')
  return raw
}

const oneOf = <T extends string>(env: Env, name: string, fallback: T, allowed: readonly T[]): T => {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, not ${JSON.stringify(raw)}`)
  }
  return raw as T
}

const origins = (raw: string | undefined): string[] => {
  const list = (raw ?? '').split(',').map((origin) => origin.trim()).filter(Boolean)
  for (const origin of list) {
    if (origin === '*' || !/^https?:\/\/[^/\s]+$/.test(origin)) {
      throw new ConfigError('CORS_ORIGINS', `must list origins like https://app.example.org, not ${JSON.stringify(origin)}`)
    }
  }
  return list
}

/**
 * Addresses and ranges (`10.0.0.0/8`, `uniquelocal`), checked by the same
 * proxy-addr Fastify hands them to. No hop count: a count trusts whatever
 * the nearest peer says, and a client that reaches the service directly
 * would pick its own address.
 */
const trustedProxies = (raw: string | undefined): false | string[] => {
  const list = (raw ?? '').split(',').map((entry) => entry.trim()).filter(Boolean)
  if (list.length === 0) return false
  // proxy-addr would read `1` as the address 0.0.0.1: say what it is not.
  if (list.some((entry) => /^\d+$/.test(entry))) throw new ConfigError('TRUST_PROXY', 'takes proxy addresses and ranges, not a hop count')
  try {
    compileProxyAddresses(list)
  } catch (error) {
    throw new ConfigError('TRUST_PROXY', `must list proxy addresses and ranges like 10.0.0.0/8 or uniquelocal: ${(error as Error).message}`)
  }
  return list
}

// 32 characters of a random base64 string carry ~190 bits: far beyond what
// an offline guess at an HMAC key (or online guessing of the metrics token)
// could reach. Shorter ones are refused.
const JWT_SECRET_MIN_LENGTH = 32

const secret = (env: Env, name: string): string | undefined => {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (raw.length < JWT_SECRET_MIN_LENGTH) {
    throw new ConfigError(name, `must be at least ${JWT_SECRET_MIN_LENGTH} characters (e.g. openssl rand -base64 48)`)
  }
  return raw
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

export const loadConfig = (env: Env = process.env): Config => {
  const databaseUrl = env.DATABASE_URL || 'sqlite:./data/people.db'
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL', 'must be sqlite:<path>, sqlite::memory: or postgres://…')
  }
  const production = env.NODE_ENV === 'production'
  const jwtSecret = secret(env, 'JWT_SECRET')
  if (production && jwtSecret === undefined) {
    throw new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production: every instance must sign with the same secret')
  }
  const redisUrl = env.REDIS_URL || undefined
  if (redisUrl !== undefined && !/^rediss?:\/\/.+/.test(redisUrl)) {
    throw new ConfigError('REDIS_URL', 'must be redis://… or rediss://…')
  }
  const adminPassword = env.ADMIN_PASSWORD || undefined
  if (adminPassword !== undefined && [...adminPassword.normalize('NFKC')].length < ACCOUNT_LIMITS.passwordMinLength) {
    throw new ConfigError('ADMIN_PASSWORD', `must be at least ${ACCOUNT_LIMITS.passwordMinLength} characters`)
  }
  const rateLimitWindowMs = integer(env, 'RATE_LIMIT_WINDOW_MS', 60_000, 0, 86_400_000)
  const loginRateLimitWindowMs = integer(env, 'LOGIN_RATE_LIMIT_WINDOW_MS', 900_000, 0, 86_400_000)
  const webhookTimeoutMs = integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 10_000)
  const webhookLeaseMs = integer(env, 'WEBHOOK_LEASE_MS', 60_000, 200, 3_600_000)
  // A lease shorter than an attempt would let another instance send it again while it runs.
  if (webhookLeaseMs <= webhookTimeoutMs) throw new ConfigError('WEBHOOK_LEASE_MS', `must be longer than WEBHOOK_TIMEOUT_MS (${webhookTimeoutMs})`)
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl,
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    sqliteSynchronous: oneOf(env, 'SQLITE_SYNCHRONOUS', 'FULL', ['FULL', 'NORMAL']),
    sqliteMmapMb: integer(env, 'SQLITE_MMAP_MB', 0, 0, SQLITE_MAX_MMAP_MB),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    graphqlMaxCost: integer(env, 'GRAPHQL_MAX_COST', GRAPHQL_LIMITS.defaultMaxCost, 1, 1_000_000_000),
    maxResponseBytes: integer(env, 'MAX_RESPONSE_BYTES', RESPONSE_LIMITS.defaultMaxBytes, RESPONSE_LIMITS.leastMaxBytes, 1024 ** 3),
    graphqlJit: integer(env, 'GRAPHQL_JIT', GRAPHQL_LIMITS.jitAfter, 0, 1_000_000),
    graphqlSqlPlan: integer(env, 'GRAPHQL_SQL_PLAN', 1, 0, 1) === 1,
    graphqlMaxSubscriptions: integer(env, 'GRAPHQL_MAX_SUBSCRIPTIONS', SUBSCRIPTION_DEFAULTS.maxPerCaller, 1, 100_000),
    corsOrigins: origins(env.CORS_ORIGINS),
    trustProxy: trustedProxies(env.TRUST_PROXY),
    maxConnections: env.MAX_CONNECTIONS === undefined || env.MAX_CONNECTIONS === '' ? undefined : integer(env, 'MAX_CONNECTIONS', 0, 0, 10_000_000),
    maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', CONNECTION_DEFAULTS.perAddress, 0, 10_000_000),
    // 0 switches load shedding off (a server run under valgrind: its loop lags whatever the load).
    maxEventLoopDelay: env.MAX_EVENT_LOOP_DELAY_MS === '0' ? 0 : integer(env, 'MAX_EVENT_LOOP_DELAY_MS', 1000, 10, 60_000),
    production,
    jwtSecret,
    jwtPreviousSecret: secret(env, 'JWT_PREVIOUS_SECRET'),
    accessTokenTtlSeconds: integer(env, 'ACCESS_TOKEN_TTL_SECONDS', 900, 30, 86_400),
    adminUsername: env.ADMIN_USERNAME || 'admin',
    adminPassword,
    // A window of 0 cannot count anything: it switches limits off like a max of 0.
    rateLimitMax: rateLimitWindowMs === 0 ? 0 : integer(env, 'RATE_LIMIT_MAX', 1000, 0, 10_000_000),
    rateLimitWindowMs,
    publicRateLimitMax: rateLimitWindowMs === 0 ? 0 : integer(env, 'PUBLIC_RATE_LIMIT_MAX', 600, 0, 10_000_000),
    maxKeysPerAccount: integer(env, 'MAX_KEYS_PER_ACCOUNT', API_KEY_LIMITS.defaultMaxPerAccount, 1, 1_000_000),
    eventSource: eventSource(env),
    eventRetentionDays: integer(env, 'EVENTS_RETENTION_DAYS', 30, 1, 36_500),
    idempotencyKeysPerDay: integer(env, 'IDEMPOTENCY_KEYS_PER_DAY', IDEMPOTENCY.defaultRecordsPerOwner, 1, 10_000_000),
    loginRateLimitMax: loginRateLimitWindowMs === 0 ? 0 : integer(env, 'LOGIN_RATE_LIMIT_MAX', 10, 0, 1_000_000),
    loginRateLimitWindowMs,
    redisUrl,
    redisKeyPrefix: env.REDIS_KEY_PREFIX || 'people-service:',
    // A revocation announced through Redis reaches every instance at once;
    // one never announced (no Redis, or an instance cut off from it),
    // requests within this, WebSocket connections within this and a tick of
    // their check (1 s): inside the contract's 5 s with a second to spare
    // (at 4 s the two made 5 s exactly; the start warns of that).
    apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_MS', 3_000, 0, 3_600_000),
    usageFlushIntervalMs: integer(env, 'USAGE_FLUSH_INTERVAL_MS', 30_000, 100, 3_600_000),
    metricsToken: secret(env, 'METRICS_TOKEN'),
    webhookAllowPrivate: oneOf(env, 'WEBHOOK_ALLOW_PRIVATE', 'false', ['true', 'false']) === 'true',
    webhookSecretKey: secret(env, 'WEBHOOK_SECRET_KEY'),
    webhookDelivery: {
      timeoutMs: webhookTimeoutMs,
      baseDelayMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 5_000, 10, 3_600_000),
      maxDelayMs: integer(env, 'WEBHOOK_RETRY_MAX_MS', 3_600_000, 10, 86_400_000),
      retryWindowMs: integer(env, 'WEBHOOK_RETRY_WINDOW_MS', 86_400_000, 100, 86_400_000),
      leaseMs: webhookLeaseMs,
      pollMs: integer(env, 'WEBHOOK_POLL_MS', 1_000, 10, 60_000)
    },
    tracing: env.OTEL_SDK_DISABLED !== 'true' && env.OTEL_TRACES_EXPORTER !== 'none' &&
      Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  }
}
