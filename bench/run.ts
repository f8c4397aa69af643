import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_OPTIONS, benchApiKey, rssMbOf, freePort, printTable, run, saveResults, seedBenchDatabase, startBenchServer, startProcess, stopProcess, type Result, type Scenario } from './lib.js'

/*
 * npm run bench -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10] [--connections 50] [--warmup 2]
 *
 * Seeds a fresh SQLite file, starts a bare Fastify server (the ceiling) and
 * the real server in production mode (logs at warn, authentication on, rate
 * limits high enough not to interfere), runs every scenario with autocannon
 * using an API key, and prints req/s, latency, errors and the ratio to the
 * ceiling. Every server, the ceiling included, gets `--warmup` seconds of
 * each scenario first, not recorded. The table is also written to bench/results/.
 */
const { values } = parseArgs({
  options: BENCH_OPTIONS
})
const people = Number(values.people)
const seconds = Number(values.seconds)
const connections = Number(values.connections)
const warmup = Number(values.warmup)
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')

/** One scenario against one server: warmed up first, then recorded. */
const measure = async (base: string, scenario: Scenario, pid: number | undefined): Promise<Result> => {
  if (warmup > 0) await run(base, scenario, warmup, connections)
  return run(base, scenario, seconds, connections, pid)
}

const dir = mkdtempSync(join(tmpdir(), 'people-bench-'))
const databaseFile = join(dir, 'people.db')
const databaseUrl = `sqlite:${databaseFile}`
try {
  const { ids, seedSeconds } = await seedBenchDatabase(databaseUrl, { people, friends: Number(values.friends), messages: Number(values.messages) })
  process.stdout.write(`seeded ${people} people in ${seedSeconds.toFixed(1)} s\n`)

  const results: Result[] = []
  const ceilingPort = await freePort()
  const ceiling = await startProcess(['--import', 'tsx', new URL('./ceiling-server.ts', import.meta.url).pathname], { PORT: String(ceilingPort) }, `http://127.0.0.1:${ceilingPort}/hello`)
  try {
    results.push(await measure(`http://127.0.0.1:${ceilingPort}`, { name: 'ceiling: bare Fastify GET /hello', request: () => ({ path: '/hello' }) }, ceiling.pid))
  } finally {
    await stopProcess(ceiling)
  }

  const randomId = () => ids[Math.floor(Math.random() * ids.length)] as string
  // The reference for the database-bound reads: what Fastify and
  // better-sqlite3 do on this file with nothing else on the path.
  const minimalPort = await freePort()
  const minimal = await startProcess(['--import', 'tsx', new URL('./minimal-server.ts', import.meta.url).pathname], { PORT: String(minimalPort), DATABASE_FILE: databaseFile }, `http://127.0.0.1:${minimalPort}/people?limit=1`)
  try {
    const minimalBase = `http://127.0.0.1:${minimalPort}`
    results.push(await measure(minimalBase, { name: 'reference: minimal Fastify + SQLite GET /person/<id>', request: () => ({ path: `/person/${randomId()}` }) }, minimal.pid))
    results.push(await measure(minimalBase, { name: 'reference: minimal Fastify + SQLite GET /people?limit=100', request: () => ({ path: '/people?limit=100' }) }, minimal.pid))
  } finally {
    await stopProcess(minimal)
  }

  const { base, server } = await startBenchServer(databaseUrl, ADMIN_PASSWORD)
  let rss = 0
  let key = ''
  const graphqlGet = (query: string, variables?: object) =>
    `/graphql?query=${encodeURIComponent(query)}${variables ? `&variables=${encodeURIComponent(JSON.stringify(variables))}` : ''}`
  const personWithFriends = 'query ($id: ID!) { person(id: $id) { name age friends(limit: 10) { name } } }'
  const peopleWithFriends = '{ people(limit: 100) { name friends(limit: 10) { name } } }'
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
      { name: 'GET /person/<id>', headers, request: () => ({ path: `/person/${randomId()}` }) },
      { name: 'GET /people?limit=100', headers, request: () => ({ path: '/people?limit=100' }) },
      { name: 'GET /people?limit=100 at 90% depth', headers, request: () => ({ path: `/people?limit=100&cursor=${deepCursor}` }) },
      { name: 'GET /person/<id>/friends', headers, request: () => ({ path: `/person/${randomId()}/friends` }) },
      { name: 'POST /person', method: 'POST', headers: json, request: () => ({ path: '/person', body: JSON.stringify({ name: `Bench ${Math.random()}`, age: 30 }) }) },
      { name: 'POST /message', method: 'POST', headers: json, request: () => ({ path: '/message', body: JSON.stringify({ personId: randomId(), text: 'hello from the bench' }) }) },
      { name: 'GraphQL person + friends(10)', headers, request: () => ({ path: graphqlGet(personWithFriends, { id: randomId() }) }) },
      { name: 'GraphQL people(100) x friends(10)', headers, request: () => ({ path: graphqlGet(peopleWithFriends) }) }
    ]
    for (const scenario of scenarios) results.push(await measure(base, scenario, server.pid))
    rss = rssMbOf(server.pid!)
  } finally {
    await stopProcess(server)
  }

  // The same GraphQL scenarios with Mercurius' JIT off, to show which is kept.
  const interpreted = await startBenchServer(databaseUrl, ADMIN_PASSWORD, { GRAPHQL_JIT: '0' })
  try {
    const headers = { 'x-api-key': key }
    results.push(await measure(interpreted.base, { name: 'GraphQL person + friends(10), no JIT', headers, request: () => ({ path: graphqlGet(personWithFriends, { id: randomId() }) }) }, interpreted.server.pid))
    results.push(await measure(interpreted.base, { name: 'GraphQL people(100) x friends(10), no JIT', headers, request: () => ({ path: graphqlGet(peopleWithFriends) }) }, interpreted.server.pid))
  } finally {
    await stopProcess(interpreted.server)
  }

  const ceilingRate = results[0]!.requestsPerSecond
  for (const result of results) result.ratio = result.requestsPerSecond / ceilingRate
  printTable(results)
  process.stdout.write(`server RSS after the run: ${rss} MB; seeding: ${seedSeconds.toFixed(1)} s\n`)
  const file = saveResults('bench', { people, seconds, connections, warmup, seedSeconds, serverRssMb: rss, results })
  process.stdout.write(`written to ${file}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
