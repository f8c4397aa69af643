import t from 'tap'
import { ConfigError, defaultMaxConnections, loadConfig, openFileLimit } from '@people-service/server'

t.test('the defaults of the README', async (t) => {
  t.match(loadConfig({}), {
    host: '127.0.0.1',
    port: 3000,
    databaseUrl: 'sqlite:./data/people.db',
    databasePoolSize: 10,
    sqliteSynchronous: 'FULL',
    sqliteMmapMb: 0,
    logLevel: 'info',
    production: false,
    graphqlMaxCost: 5_000,
    graphqlMaxSubscriptions: 20,
    corsOrigins: [],
    maxEventLoopDelay: 1000,
    maxConnections: undefined,
    maxConnectionsPerAddress: 256
  })
})

t.test('connections: MAX_CONNECTIONS when given, else what the open-file limit leaves', async (t) => {
  t.match(loadConfig({ MAX_CONNECTIONS: '500', MAX_CONNECTIONS_PER_ADDRESS: '0' }), { maxConnections: 500, maxConnectionsPerAddress: 0 })
  t.equal(loadConfig({ MAX_CONNECTIONS: '0' }).maxConnections, 0, '0: no limit')
  for (const bad of ['-1', 'many', '1.5']) t.throws(() => loadConfig({ MAX_CONNECTIONS: bad }), /MAX_CONNECTIONS must be a whole number/, bad)
  t.throws(() => loadConfig({ MAX_CONNECTIONS_PER_ADDRESS: 'x' }), /MAX_CONNECTIONS_PER_ADDRESS/)
  t.equal(defaultMaxConnections(20_000, 10), 20_000 - 10 - 2_000, 'the pool and a tenth are kept back')
  t.equal(defaultMaxConnections(1024, 10), 1024 - 10 - 128, 'a reserve of at least 128')
  t.equal(defaultMaxConnections(undefined, 10), 0, 'no limit known: none set')
  if (process.platform === 'linux') t.ok((openFileLimit() ?? 0) > 0, 'read on Linux')
})

t.test('values are read and checked', async (t) => {
  const config = loadConfig({ HOST: '0.0.0.0', PORT: '8080', DATABASE_URL: 'postgres://u@h/db', LOG_LEVEL: 'warn', NODE_ENV: 'production', JWT_SECRET: 's'.repeat(40) })
  t.match(config, { host: '0.0.0.0', port: 8080, databaseUrl: 'postgres://u@h/db', logLevel: 'warn', production: true })
  t.throws(() => loadConfig({ PORT: '70000' }), /PORT must be a whole number from 0 to 65535/)
  t.throws(() => loadConfig({ PORT: '-1' }), /PORT/)
  t.throws(() => loadConfig({ DATABASE_POOL_SIZE: '0' }), /DATABASE_POOL_SIZE/)
  t.throws(() => loadConfig({ SQLITE_SYNCHRONOUS: 'OFF' }), /SQLITE_SYNCHRONOUS must be one of FULL, NORMAL/)
  t.equal(loadConfig({ SQLITE_MMAP_MB: '2047' }).sqliteMmapMb, 2047)
  for (const bad of ['-1', '1.5', 'all', '2048']) t.throws(() => loadConfig({ SQLITE_MMAP_MB: bad }), /SQLITE_MMAP_MB must be a whole number from 0 to 2047/, bad)
  t.throws(() => loadConfig({ GRAPHQL_MAX_COST: 'lots' }), /GRAPHQL_MAX_COST/)
  t.equal(loadConfig({ GRAPHQL_MAX_COST: '1000' }).graphqlMaxCost, 1000)
  t.equal(loadConfig({}).maxResponseBytes, 8 * 1024 * 1024, 'MAX_RESPONSE_BYTES: 8 MiB unless set')
  t.equal(loadConfig({ MAX_RESPONSE_BYTES: '2097152' }).maxResponseBytes, 2097152)
  t.throws(() => loadConfig({ MAX_RESPONSE_BYTES: '1000' }), /MAX_RESPONSE_BYTES/, 'too small for one page of anything')
  t.equal(loadConfig({ GRAPHQL_JIT: '0' }).graphqlJit, 0)
  t.throws(() => loadConfig({ GRAPHQL_JIT: 'yes' }), /GRAPHQL_JIT/)
  t.equal(loadConfig({}).graphqlSqlPlan, true, 'the SQL plan is on unless switched off')
  t.equal(loadConfig({ GRAPHQL_SQL_PLAN: '0' }).graphqlSqlPlan, false)
  t.throws(() => loadConfig({ GRAPHQL_SQL_PLAN: 'off' }), /GRAPHQL_SQL_PLAN/)
  t.equal(loadConfig({ GRAPHQL_MAX_SUBSCRIPTIONS: '5' }).graphqlMaxSubscriptions, 5)
  for (const bad of ['0', 'many', '-1']) t.throws(() => loadConfig({ GRAPHQL_MAX_SUBSCRIPTIONS: bad }), /GRAPHQL_MAX_SUBSCRIPTIONS must be a whole number from 1/, bad)
  t.same(loadConfig({ CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins, ['https://a.example', 'http://localhost:5173'])
  t.throws(() => loadConfig({ CORS_ORIGINS: '*' }), /CORS_ORIGINS/)
  t.equal(loadConfig({}).trustProxy, false, 'no proxy is trusted unless named')
  t.same(loadConfig({ TRUST_PROXY: 'uniquelocal, 10.0.0.0/8, ::1' }).trustProxy, ['uniquelocal', '10.0.0.0/8', '::1'])
  for (const bad of ['1', 'nginx', '10.0.0.0/33', '10.0.0.0/8/1', 'true']) t.throws(() => loadConfig({ TRUST_PROXY: bad }), /TRUST_PROXY/, bad)
})

t.test('defaults follow the contract', async (t) => {
  const config = loadConfig({})
  t.match(config, {
    jwtSecret: undefined,
    adminUsername: 'admin',
    adminPassword: undefined,
    rateLimitMax: 1000,
    rateLimitWindowMs: 60_000,
    loginRateLimitMax: 10,
    redisUrl: undefined,
    redisKeyPrefix: 'people-service:',
    accessTokenTtlSeconds: 900,
    apiKeyCacheTtlMs: 3000,
    metricsToken: undefined,
    maxKeysPerAccount: 100,
    publicRateLimitMax: 600
  })
  t.equal(loadConfig({ MAX_KEYS_PER_ACCOUNT: '5' }).maxKeysPerAccount, 5)
  for (const bad of ['0', 'lots', '-1']) t.throws(() => loadConfig({ MAX_KEYS_PER_ACCOUNT: bad }), /MAX_KEYS_PER_ACCOUNT must be a whole number from 1/, bad)
  t.equal(loadConfig({ PUBLIC_RATE_LIMIT_MAX: '0' }).publicRateLimitMax, 0, '0 switches it off')
  t.throws(() => loadConfig({ PUBLIC_RATE_LIMIT_MAX: 'many' }), /PUBLIC_RATE_LIMIT_MAX/)
})

t.test('METRICS_TOKEN: unset by default (admins only), refused when short enough to guess', async (t) => {
  t.equal(loadConfig({}).metricsToken, undefined)
  t.throws(() => loadConfig({ METRICS_TOKEN: 'scrape-me' }), new ConfigError('METRICS_TOKEN', 'must be at least 32 characters (e.g. openssl rand -base64 48)'))
  const token = 'a-scraper-token-of-enough-length-for-use'
  t.equal(loadConfig({ METRICS_TOKEN: token }).metricsToken, token)
})

t.test('production refuses to start without JWT_SECRET; short secrets are refused everywhere', async (t) => {
  t.throws(() => loadConfig({ NODE_ENV: 'production' }), new ConfigError('JWT_SECRET', 'is required when NODE_ENV=production: every instance must sign with the same secret'))
  t.throws(() => loadConfig({ JWT_SECRET: 'short' }), ConfigError)
  t.throws(() => loadConfig({ JWT_PREVIOUS_SECRET: 'short' }), ConfigError)
  const secret = 'x'.repeat(32)
  t.equal(loadConfig({ NODE_ENV: 'production', JWT_SECRET: secret }).jwtSecret, secret)
})

t.test('limits: 0 switches off, nonsense is refused', async (t) => {
  t.equal(loadConfig({ RATE_LIMIT_MAX: '0' }).rateLimitMax, 0)
  t.equal(loadConfig({ RATE_LIMIT_WINDOW_MS: '0' }).rateLimitMax, 0, 'a window of 0 switches limits off too')
  t.throws(() => loadConfig({ RATE_LIMIT_MAX: '-1' }), ConfigError)
  t.throws(() => loadConfig({ RATE_LIMIT_MAX: 'lots' }), ConfigError)
  t.throws(() => loadConfig({ REDIS_URL: 'localhost:6379' }), ConfigError)
  t.throws(() => loadConfig({ ADMIN_PASSWORD: 'too short' }), ConfigError)
  t.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_KEY_PREFIX: 'staging:' }).redisKeyPrefix, 'staging:')
  t.equal(loadConfig({ MAX_EVENT_LOOP_DELAY_MS: '0' }).maxEventLoopDelay, 0, 'load shedding off')
  t.equal(loadConfig({ MAX_EVENT_LOOP_DELAY_MS: '250' }).maxEventLoopDelay, 250)
  for (const value of ['5', '60001', '-1', '00']) t.throws(() => loadConfig({ MAX_EVENT_LOOP_DELAY_MS: value }), ConfigError, value)
})
