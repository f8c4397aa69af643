import { randomBytes } from 'node:crypto'
import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  BENCH_OPTIONS, benchApiKey, combineParts, compareWithinRun, freePort, generatorBound, pinCpus, printRows, printTable, rssMbOf, run, saveResults, seedBenchDatabase,
  serviceSettingsFromEnv, startBenchServer, startProcess, stopProcess, type Result, type Scenario
} from './lib.js'

/*
 * npm run bench -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10] [--connections 50] [--warmup 2] [--cold]
 *
 * Seeds a fresh SQLite file, starts a bare Fastify server (the ceiling),
 * minimal servers on the same file (Fastify + better-sqlite3 for REST,
 * Mercurius with loaders and JIT for GraphQL) and the real server in
 * production mode (logs at warn, authentication on, rate limits high enough
 * not to interfere), runs every scenario with autocannon using an API key,
 * and prints req/s, latency, errors, the ratio to the ceiling and to the
 * minimal server of the same scenario. Every server, the ceiling included,
 * gets `--warmup` seconds of each scenario first, not recorded. The servers
 * and the load generator run on CPUs of their own (`pinCpus`). The real
 * server takes the rest of its settings from the environment, as in
 * production: `SQLITE_MMAP_MB=2047 npm run bench` measures it with the map.
 *
 * `--people 100000,1000000` seeds a file of each size and starts each kind
 * of server on every file at once; each scenario then runs size by size,
 * forward then back (`measureSizes`), and a last table puts each scenario's
 * ratio at every size side by side. Tables are also written to bench/results/.
 */
const { values } = parseArgs({
  // --cold: no read-through of the files before each scenario (`readThrough`).
  options: { ...BENCH_OPTIONS, cold: { type: 'boolean', default: false } }
})
const peopleCounts = String(values.people).split(',').map(Number)
if (peopleCounts.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--people takes whole numbers separated by commas, not ${values.people}`)
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const pinning = pinCpus()
// The real server reads the rest of its settings from this environment, as in production.
const settings = serviceSettingsFromEnv()
const settingsText = Object.entries(settings).map(([name, value]) => `${name}=${value}`).join(' ') || 'the defaults'
process.stdout.write(`Node ${process.version}; ${pinning}; the service with ${settingsText}\n`)
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')

/** A server under test on one size's file, and the scenario it runs there. */
interface Target { base: string, pid: number | undefined, scenario: Scenario, databaseFile: string }

/**
 * Reads a database file and its write-ahead log through once, so that the
 * scenario starts with them in the OS page cache, as a long-running
 * server's data is. Some machines page out file pages nobody touched for a
 * while: where this bench was measured, DAMON pages out memory idle for
 * 60 s, so the 1M file, last read by another scenario minutes before, came
 * from disk during the warm-up and the measurement, and friends read −39%
 * from 100k to 1M instead of −18% with the file read through (fifth pass in
 * README.md). `--cold` leaves it out.
 */
const readThrough = (file: string): void => {
  const buffer = Buffer.allocUnsafe(1 << 20)
  for (const path of [file, `${file}-wal`]) {
    if (!existsSync(path)) continue
    const fd = openSync(path, 'r')
    try {
      for (let read = 1; read > 0;) read = readSync(fd, buffer, 0, buffer.length, null)
    } finally {
      closeSync(fd)
    }
  }
}

/** Two halves of equal length as one result: req/s their mean (`combineParts`). */
const combineHalves = (name: string, [first, second]: [Result, Result]): Result =>
  combineParts(name, [first, second], Math.round((first.requestsPerSecond + second.requestsPerSecond) / 2))

/**
 * One scenario on each size's server. Every file is read through and every
 * server warmed up first. With one size the scenario is then measured for
 * `--seconds`; with several, in halves ordered forward then back (100k, 1M,
 * 1M, 100k), each size's two halves combined. A machine whose speed drifts
 * during the run then weighs on every size alike: the change from one size
 * to the next compares measurements centred on the same moment.
 */
const measureSizes = async (targets: Target[]): Promise<Result[]> => {
  if (values.cold !== true) for (const { databaseFile } of targets) readThrough(databaseFile)
  if (warmup > 0) for (const { base, scenario } of targets) await run(base, scenario, warmup, connections)
  if (targets.length === 1) {
    const { base, scenario, pid } = targets[0]!
    return [await run(base, scenario, seconds, connections, pid)]
  }
  const half = ({ base, scenario, pid }: Target) => run(base, scenario, seconds / 2, connections, pid)
  const firstHalves: Result[] = []
  for (const target of targets) firstHalves.push(await half(target))
  const secondHalves: Result[] = []
  for (const target of [...targets].reverse()) secondHalves.unshift(await half(target))
  return targets.map((target, i) => combineHalves(target.scenario.name, [firstHalves[i]!, secondHalves[i]!]))
}

/** The size of a SQLite database on disk, its write-ahead log included, in MB. */
const databaseMb = (file: string): number =>
  Math.round([file, `${file}-wal`].reduce((bytes, path) => bytes + (existsSync(path) ? statSync(path).size : 0), 0) / 1e6)

const graphqlGet = (query: string, variables?: object) =>
  `/graphql?query=${encodeURIComponent(query)}${variables ? `&variables=${encodeURIComponent(JSON.stringify(variables))}` : ''}`
const PERSON_WITH_FRIENDS = 'query ($id: ID!) { person(id: $id) { name age friends(limit: 10) { name } } }'
const PEOPLE_WITH_FRIENDS = '{ people(limit: 100) { name friends(limit: 10) { name } } }'

const REFERENCE = {
  person: 'reference: minimal Fastify + SQLite GET /person/<id>',
  people: 'reference: minimal Fastify + SQLite GET /people?limit=100',
  graphqlPerson: 'reference: minimal Mercurius person + friends(10)',
  graphqlPeople: 'reference: minimal Mercurius people(100) x friends(10)'
}

/** One size of seeded data: its file, its ids and, once measured, its results. */
interface Size {
  people: number
  databaseFile: string
  ids: string[]
  seedSeconds: number
  databaseMb: number
  results: Result[]
  serverRssMb: number
}

/**
 * The requests the scenarios make of one size's data, the same for every
 * server: a fresh path (and body) per request, ids drawn at random.
 */
const requestsOf = ({ ids }: Size) => {
  const randomId = () => ids[Math.floor(Math.random() * ids.length)] as string
  return {
    person: () => ({ path: `/person/${randomId()}` }),
    people: () => ({ path: '/people?limit=100' }),
    friends: () => ({ path: `/person/${randomId()}/friends` }),
    graphqlPerson: () => ({ path: graphqlGet(PERSON_WITH_FRIENDS, { id: randomId() }) }),
    graphqlPeople: () => ({ path: graphqlGet(PEOPLE_WITH_FRIENDS) }),
    newPerson: () => ({ path: '/person', body: JSON.stringify({ name: `Bench ${Math.random()}`, age: 30 }) }),
    message: () => ({ path: '/message', body: JSON.stringify({ personId: randomId(), text: 'hello from the bench' }) })
  }
}

/** A server process of the bench, on a port of its own. */
interface Running { base: string, pid: number | undefined, child: ChildProcess }

/**
 * One kind of server started on every size's file at once, its scenarios
 * measured size by size (`measureSizes`), and the servers stopped.
 * `scenariosOf` gives one size's scenarios, in the same order at every size.
 */
const onEverySize = async <S extends Running>(
  sizes: Size[],
  start: (size: Size) => Promise<S>,
  scenariosOf: (size: Size, server: S) => Promise<Scenario[]>,
  afterwards: (size: Size, server: S) => void = () => {}
): Promise<void> => {
  const servers: S[] = []
  try {
    for (const size of sizes) servers.push(await start(size))
    const scenarios = await Promise.all(sizes.map((size, i) => scenariosOf(size, servers[i]!)))
    for (let j = 0; j < scenarios[0]!.length; j++) {
      const results = await measureSizes(servers.map(({ base, pid }, i) => ({ base, pid, scenario: scenarios[i]![j]!, databaseFile: sizes[i]!.databaseFile })))
      results.forEach((result, i) => sizes[i]!.results.push(result))
    }
    sizes.forEach((size, i) => afterwards(size, servers[i]!))
  } finally {
    for (const { child } of servers) await stopProcess(child)
  }
}

/** A helper process of bench/ (ceiling, minimal servers) on a free port, ready when `readyPath` answers. */
const startHelper = async (script: string, readyPath: string, env: Record<string, string> = {}): Promise<Running> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = await startProcess(['--import', 'tsx', new URL(script, import.meta.url).pathname], { PORT: String(port), ...env }, `${base}${readyPath}`)
  return { base, pid: child.pid, child }
}

/** The real server on one size's file, as `startBenchServer` starts it, and an API key of its admin. */
interface Service extends Running { key: string }

const startService = async (size: Size, extra: Record<string, string> = {}): Promise<Service> => {
  const { base, server } = await startBenchServer(`sqlite:${size.databaseFile}`, ADMIN_PASSWORD, extra)
  try {
    return { base, pid: server.pid, child: server, key: await benchApiKey(base, ADMIN_PASSWORD) }
  } catch (error) {
    await stopProcess(server)
    throw error
  }
}

/** The cursor 90% deep into the people, reached the way a client would: page after page. */
const deepCursorOf = async (base: string, headers: Record<string, string>, people: number): Promise<string> => {
  let deep = '/people?limit=1000'
  for (let seen = 0; seen < Math.floor(people * 0.9) - 1000;) {
    const page = await fetch(`${base}${deep}`, { headers })
    seen += (await page.json() as unknown[]).length
    const next = /^<([^>]+)>/.exec(page.headers.get('link') ?? '')?.[1]
    if (next === undefined) break
    deep = next
  }
  return new URL(deep, base).searchParams.get('cursor') ?? ''
}

const serviceScenarios = async (size: Size, { base, key }: Service): Promise<Scenario[]> => {
  const requests = requestsOf(size)
  const headers = { 'x-api-key': key }
  const json = { ...headers, 'content-type': 'application/json' }
  const deepCursor = await deepCursorOf(base, headers, size.people)
  return [
    { name: 'GET /person/<id>', headers, reference: REFERENCE.person, request: requests.person },
    { name: 'GET /people?limit=100', headers, reference: REFERENCE.people, request: requests.people },
    { name: 'GET /people?limit=100 at 90% depth', headers, reference: REFERENCE.people, request: () => ({ path: `/people?limit=100&cursor=${deepCursor}` }) },
    { name: 'GET /person/<id>/friends', headers, request: requests.friends },
    { name: 'POST /person', method: 'POST', headers: json, request: requests.newPerson },
    { name: 'POST /message', method: 'POST', headers: json, request: requests.message },
    { name: 'GraphQL person + friends(10)', headers, reference: REFERENCE.graphqlPerson, request: requests.graphqlPerson },
    { name: 'GraphQL people(100) x friends(10)', headers, reference: REFERENCE.graphqlPeople, request: requests.graphqlPeople }
  ]
}

const dir = mkdtempSync(join(tmpdir(), 'people-bench-'))
try {
  const sizes: Size[] = []
  for (const people of peopleCounts) {
    const databaseFile = join(dir, `people-${people}.db`)
    const { ids, seedSeconds } = await seedBenchDatabase(`sqlite:${databaseFile}`, { people, friends: Number(values.friends), messages: Number(values.messages) })
    const size: Size = { people, databaseFile, ids, seedSeconds, databaseMb: databaseMb(databaseFile), results: [], serverRssMb: 0 }
    sizes.push(size)
    process.stdout.write(`seeded ${people} people in ${seedSeconds.toFixed(1)} s; the SQLite file: ${size.databaseMb} MB\n`)
  }

  // The ceiling does not read the data: one server, measured in two halves,
  // at the start and at the end of the run, is every size's denominator.
  const hello: Scenario = { name: 'ceiling: bare Fastify GET /hello', request: () => ({ path: '/hello' }) }
  const ceiling = await startHelper('./ceiling-server.ts', '/hello')
  try {
    if (warmup > 0) await run(ceiling.base, hello, warmup, connections)
    const first = await run(ceiling.base, hello, seconds / 2, connections, ceiling.pid)

    // The references: what Fastify and better-sqlite3 (REST), and Mercurius
    // with its loaders and JIT (GraphQL), do on each file with nothing else on the path.
    await onEverySize(sizes, (size) => startHelper('./minimal-server.ts', '/people?limit=1', { DATABASE_FILE: size.databaseFile }), async (size) => {
      const requests = requestsOf(size)
      return [{ name: REFERENCE.person, request: requests.person }, { name: REFERENCE.people, request: requests.people }]
    })
    await onEverySize(sizes, (size) => startHelper('./minimal-mercurius.ts', graphqlGet('{ people(limit: 1) { id } }'), { DATABASE_FILE: size.databaseFile }), async (size) => {
      const requests = requestsOf(size)
      return [{ name: REFERENCE.graphqlPerson, request: requests.graphqlPerson }, { name: REFERENCE.graphqlPeople, request: requests.graphqlPeople }]
    })

    await onEverySize(sizes, (size) => startService(size), serviceScenarios, (size, { pid }) => { size.serverRssMb = rssMbOf(pid!) })
    // The same GraphQL scenarios through the resolvers (the SQL plan off,
    // graphql-jit on), to show what building the JSON in the database gives.
    await onEverySize(sizes, (size) => startService(size, { GRAPHQL_SQL_PLAN: '0' }), async (size, { key }) => {
      const requests = requestsOf(size)
      const headers = { 'x-api-key': key }
      return [
        { name: 'GraphQL person + friends(10), resolvers', headers, reference: REFERENCE.graphqlPerson, request: requests.graphqlPerson },
        { name: 'GraphQL people(100) x friends(10), resolvers', headers, reference: REFERENCE.graphqlPeople, request: requests.graphqlPeople }
      ]
    })

    const last = await run(ceiling.base, hello, seconds / 2, connections, ceiling.pid)
    const combined = combineHalves(hello.name, [first, last])
    process.stdout.write(`\nthe ceiling: ${first.requestsPerSecond} req/s at the start of the run, ${last.requestsPerSecond} at the end\n`)
    for (const size of sizes) {
      size.results.unshift({ ...combined })
      compareWithinRun(size.results)
    }
  } finally {
    await stopProcess(ceiling.child)
  }

  for (const size of sizes) {
    process.stdout.write(`\n${size.people} people:\n`)
    printTable(size.results)
    process.stdout.write(`server RSS after the run: ${size.serverRssMb} MB; seeding: ${size.seedSeconds.toFixed(1)} s; the SQLite file: ${size.databaseMb} MB\n`)
  }

  // Each scenario's ratio to the ceiling at every size: what growing the data costs.
  if (sizes.length > 1) {
    const first = sizes[0]!
    process.stdout.write('\nratio to the ceiling by size (change from the first size):\n')
    printRows([
      ['scenario', ...sizes.map((size) => `${size.people}`), 'change'],
      ...first.results.slice(1).map(({ scenario, ratio = 0 }) => {
        const at = sizes.map((size) => size.results.find((result) => result.scenario === scenario)?.ratio ?? 0)
        const last = at[at.length - 1]!
        return [scenario, ...at.map((value) => value.toFixed(3)), `${(((last - ratio) / ratio) * 100).toFixed(0)}%`]
      })
    ])
  }
  if (sizes.some((size) => size.results.some(generatorBound))) process.exitCode = 1
  const runs = sizes.map(({ people, seedSeconds, databaseMb, serverRssMb, results }) => ({ people, seedSeconds, databaseMb, serverRssMb, results }))
  const file = saveResults('bench', { seconds, connections, warmup, cold: values.cold, pinning, settings, runs })
  process.stdout.write(`written to ${file}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
