import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import {
  BENCH_OPTIONS, benchApiKey, compareWithinRun, freePort, pinCpus, printRows, printTable, rssMbOf, run, saveResults, seedBenchDatabase, serviceSettingsFromEnv,
  startBenchServer, startProcess, stopProcess, type Result, type Scenario
} from './lib.js'

/*
 * npm run bench -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10] [--connections 50] [--warmup 2]
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
 * `--people 100000,1000000` runs the whole bench at each size in turn, then
 * prints each scenario's ratio at every size side by side. Tables are also
 * written to bench/results/.
 */
const { values } = parseArgs({
  options: BENCH_OPTIONS
})
const sizes = String(values.people).split(',').map(Number)
if (sizes.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`--people takes whole numbers separated by commas, not ${values.people}`)
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const pinning = pinCpus()
// The real server reads the rest of its settings from this environment, as in production.
const settings = serviceSettingsFromEnv()
const settingsText = Object.entries(settings).map(([name, value]) => `${name}=${value}`).join(' ') || 'the defaults'
process.stdout.write(`${pinning}; the service with ${settingsText}\n`)
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')

/** One scenario against one server: warmed up first, then recorded. */
const measure = async (base: string, scenario: Scenario, pid: number | undefined): Promise<Result> => {
  if (warmup > 0) await run(base, scenario, warmup, connections)
  return run(base, scenario, seconds, connections, pid)
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

interface SizeRun { people: number, seedSeconds: number, databaseMb: number, serverRssMb: number, results: Result[] }

const benchAt = async (people: number): Promise<SizeRun> => {
  const dir = mkdtempSync(join(tmpdir(), 'people-bench-'))
  const databaseFile = join(dir, 'people.db')
  const databaseUrl = `sqlite:${databaseFile}`
  try {
    const { ids, seedSeconds } = await seedBenchDatabase(databaseUrl, { people, friends: Number(values.friends), messages: Number(values.messages) })
    const size = databaseMb(databaseFile)
    process.stdout.write(`seeded ${people} people in ${seedSeconds.toFixed(1)} s; the SQLite file: ${size} MB\n`)

    const results: Result[] = []
    const ceilingPort = await freePort()
    const ceiling = await startProcess(['--import', 'tsx', new URL('./ceiling-server.ts', import.meta.url).pathname], { PORT: String(ceilingPort) }, `http://127.0.0.1:${ceilingPort}/hello`)
    try {
      results.push(await measure(`http://127.0.0.1:${ceilingPort}`, { name: 'ceiling: bare Fastify GET /hello', request: () => ({ path: '/hello' }) }, ceiling.pid))
    } finally {
      await stopProcess(ceiling)
    }

    const randomId = () => ids[Math.floor(Math.random() * ids.length)] as string
    // The references: what Fastify and better-sqlite3 (REST), and Mercurius
    // with its loaders and JIT (GraphQL), do on this file with nothing else on the path.
    const minimalPort = await freePort()
    const minimal = await startProcess(['--import', 'tsx', new URL('./minimal-server.ts', import.meta.url).pathname], { PORT: String(minimalPort), DATABASE_FILE: databaseFile }, `http://127.0.0.1:${minimalPort}/people?limit=1`)
    try {
      const minimalBase = `http://127.0.0.1:${minimalPort}`
      results.push(await measure(minimalBase, { name: REFERENCE.person, request: () => ({ path: `/person/${randomId()}` }) }, minimal.pid))
      results.push(await measure(minimalBase, { name: REFERENCE.people, request: () => ({ path: '/people?limit=100' }) }, minimal.pid))
    } finally {
      await stopProcess(minimal)
    }
    const mercuriusPort = await freePort()
    const mercurius = await startProcess(['--import', 'tsx', new URL('./minimal-mercurius.ts', import.meta.url).pathname], { PORT: String(mercuriusPort), DATABASE_FILE: databaseFile }, `http://127.0.0.1:${mercuriusPort}${graphqlGet('{ people(limit: 1) { id } }')}`)
    try {
      const mercuriusBase = `http://127.0.0.1:${mercuriusPort}`
      results.push(await measure(mercuriusBase, { name: REFERENCE.graphqlPerson, request: () => ({ path: graphqlGet(PERSON_WITH_FRIENDS, { id: randomId() }) }) }, mercurius.pid))
      results.push(await measure(mercuriusBase, { name: REFERENCE.graphqlPeople, request: () => ({ path: graphqlGet(PEOPLE_WITH_FRIENDS) }) }, mercurius.pid))
    } finally {
      await stopProcess(mercurius)
    }

    const { base, server } = await startBenchServer(databaseUrl, ADMIN_PASSWORD)
    let rss = 0
    let key = ''
    try {
      key = await benchApiKey(base, ADMIN_PASSWORD)
      const headers = { 'x-api-key': key }
      const json = { ...headers, 'content-type': 'application/json' }

      // The cursor 90% deep, reached the way a client would: page after page.
      let deep = '/people?limit=1000'
      for (let seen = 0; seen < Math.floor(people * 0.9) - 1000;) {
        const page = await fetch(`${base}${deep}`, { headers })
        seen += (await page.json() as unknown[]).length
        const next = /^<([^>]+)>/.exec(page.headers.get('link') ?? '')?.[1]
        if (next === undefined) break
        deep = next
      }
      const deepCursor = new URL(deep, base).searchParams.get('cursor') ?? ''

      const scenarios: Scenario[] = [
        { name: 'GET /person/<id>', headers, reference: REFERENCE.person, request: () => ({ path: `/person/${randomId()}` }) },
        { name: 'GET /people?limit=100', headers, reference: REFERENCE.people, request: () => ({ path: '/people?limit=100' }) },
        { name: 'GET /people?limit=100 at 90% depth', headers, reference: REFERENCE.people, request: () => ({ path: `/people?limit=100&cursor=${deepCursor}` }) },
        { name: 'GET /person/<id>/friends', headers, request: () => ({ path: `/person/${randomId()}/friends` }) },
        { name: 'POST /person', method: 'POST', headers: json, request: () => ({ path: '/person', body: JSON.stringify({ name: `Bench ${Math.random()}`, age: 30 }) }) },
        { name: 'POST /message', method: 'POST', headers: json, request: () => ({ path: '/message', body: JSON.stringify({ personId: randomId(), text: 'hello from the bench' }) }) },
        { name: 'GraphQL person + friends(10)', headers, reference: REFERENCE.graphqlPerson, request: () => ({ path: graphqlGet(PERSON_WITH_FRIENDS, { id: randomId() }) }) },
        { name: 'GraphQL people(100) x friends(10)', headers, reference: REFERENCE.graphqlPeople, request: () => ({ path: graphqlGet(PEOPLE_WITH_FRIENDS) }) }
      ]
      for (const scenario of scenarios) results.push(await measure(base, scenario, server.pid))
      rss = rssMbOf(server.pid!)
    } finally {
      await stopProcess(server)
    }

    // The same GraphQL scenarios through the resolvers (the SQL plan off,
    // graphql-jit on), to show what building the JSON in the database gives.
    const resolvers = await startBenchServer(databaseUrl, ADMIN_PASSWORD, { GRAPHQL_SQL_PLAN: '0' })
    try {
      const headers = { 'x-api-key': key }
      results.push(await measure(resolvers.base, { name: 'GraphQL person + friends(10), resolvers', headers, reference: REFERENCE.graphqlPerson, request: () => ({ path: graphqlGet(PERSON_WITH_FRIENDS, { id: randomId() }) }) }, resolvers.server.pid))
      results.push(await measure(resolvers.base, { name: 'GraphQL people(100) x friends(10), resolvers', headers, reference: REFERENCE.graphqlPeople, request: () => ({ path: graphqlGet(PEOPLE_WITH_FRIENDS) }) }, resolvers.server.pid))
    } finally {
      await stopProcess(resolvers.server)
    }

    compareWithinRun(results)
    return { people, seedSeconds, databaseMb: size, serverRssMb: rss, results }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const runs: SizeRun[] = []
for (const people of sizes) {
  const sizeRun = await benchAt(people)
  runs.push(sizeRun)
  process.stdout.write(`\n${people} people:\n`)
  printTable(sizeRun.results)
  process.stdout.write(`server RSS after the run: ${sizeRun.serverRssMb} MB; seeding: ${sizeRun.seedSeconds.toFixed(1)} s; the SQLite file: ${sizeRun.databaseMb} MB\n`)
}

// Each scenario's ratio to the ceiling at every size: what growing the data costs.
if (runs.length > 1) {
  const first = runs[0]!
  process.stdout.write('\nratio to the ceiling by size (change from the first size):\n')
  printRows([
    ['scenario', ...runs.map((r) => `${r.people}`), 'change'],
    ...first.results.slice(1).map(({ scenario, ratio = 0 }) => {
      const at = runs.map((r) => r.results.find((result) => result.scenario === scenario)?.ratio ?? 0)
      const last = at[at.length - 1]!
      return [scenario, ...at.map((value) => value.toFixed(3)), `${(((last - ratio) / ratio) * 100).toFixed(0)}%`]
    })
  ])
}
const file = saveResults('bench', { seconds, connections, warmup, pinning, settings, runs })
process.stdout.write(`written to ${file}\n`)
