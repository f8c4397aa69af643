import { spawn } from 'node:child_process'
import { constants } from 'node:os'
import { NO_NATS, NO_REDIS, skipWithoutNats, skipWithoutRedis, stopTestServices, testNatsUrl, testPostgresUrl, testRedisUrl } from './test-services.js'

/*
 * node packages/infra/dist/testing/run-with-test-services.js <command> [args…]
 *
 * What `npm test` runs tap with: PostgreSQL and Redis started once for the
 * whole run (or taken from TEST_DATABASE_URL and TEST_REDIS_URL, see
 * test-services.ts) and handed to every test file through those variables,
 * then stopped once the command is done. Exits with the command's status.
 */
const [command, ...args] = process.argv.slice(2)
if (command === undefined) {
  process.stderr.write('usage: run-with-test-services <command> [args…]\n')
  process.exit(2)
}

const where = (url: string, given: string | undefined) => {
  const { protocol, host } = new URL(url)
  return `${protocol}//${host}${given === undefined ? ' (private to this run)' : ''}`
}

let status: number
try {
  const given = { postgres: process.env.TEST_DATABASE_URL || undefined, redis: process.env.TEST_REDIS_URL || undefined, nats: process.env.TEST_NATS_URL || undefined }
  const [postgresUrl, redisUrl, natsUrl] = await Promise.all([
    testPostgresUrl(),
    skipWithoutRedis === false ? testRedisUrl() : undefined,
    skipWithoutNats === false ? testNatsUrl() : undefined
  ])
  const env: Record<string, string> = { TEST_DATABASE_URL: postgresUrl }
  process.stderr.write(`PostgreSQL for the tests: ${where(postgresUrl, given.postgres)}\n`)
  if (redisUrl === undefined) {
    process.stderr.write(`\n!!! ${NO_REDIS} !!!\n\n`)
  } else {
    env.TEST_REDIS_URL = redisUrl
    process.stderr.write(`Redis for the tests: ${where(redisUrl, given.redis)}\n`)
  }
  if (natsUrl === undefined) {
    process.stderr.write(`\n!!! ${NO_NATS} !!!\n\n`)
  } else {
    env.TEST_NATS_URL = natsUrl
    process.stderr.write(`NATS for the tests: ${where(natsUrl, given.nats)}\n`)
  }

  const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...env } })
  // A signal to this process alone (a CI timeout, say) reaches the tests too.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal))
  status = await new Promise<number>((resolve) => {
    child.on('error', (error) => { process.stderr.write(`${command}: ${error.message}\n`); resolve(127) })
    child.on('exit', (code, signal) => resolve(code ?? 128 + (signal === null ? 0 : constants.signals[signal])))
  })
} catch (error) {
  process.stderr.write(`could not start the test services: ${error instanceof Error ? error.message : String(error)}\n`)
  status = 1
}
await stopTestServices()
process.exit(status)
