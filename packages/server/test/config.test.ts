import t from 'tap'
import { ConfigError, loadConfig } from '@people-service/server'

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
    accessTokenTtlSeconds: 900
  })
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
})
