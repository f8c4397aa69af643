import { randomBytes } from 'node:crypto'
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { availableParallelism, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { BENCH_OPTIONS, benchApiKey, cpuTimeOf, run, seedBenchDatabase, startBenchServer, stopProcess } from './lib.js'

/*
 * npm run bench:cost -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10] [--connections 10]
 *                       [--runs 20] [--loops 4] [--max-cost N] [--seeded <SQLite file seeded before, used as a copy>]
 *
 * Calibrates GraphQL's cost model against time. Seeds a fresh SQLite file
 * (or copies one seeded before, with no accounts: `npm run seed`), starts the real server in production mode and,
 * for each shape of expensive query, finds the largest version of it the
 * budget admits (the server's own answer: 400 QUERY_TOO_COSTLY or not),
 * then times it `--runs` times, alone: wall time, and the server's CPU time
 * per run (what it costs an idle core, whatever else the machine is doing).
 * Then one caller loops the slowest of
 * them (one at a time, then `--loops` at once) while another caller reads GET /person/<id>
 * (autocannon, `--connections`): that caller's p99, and how many of its
 * requests were refused (503 from the overload guard, or anything else),
 * and the longest the server's event loop was held meanwhile (its own
 * figure, nodejs_eventloop_lag_max_seconds of GET /metrics, which starts
 * anew at each scrape).
 */
const { values } = parseArgs({
  options: {
    ...BENCH_OPTIONS,
    connections: { type: 'string', default: '10' },
    runs: { type: 'string', default: '20' },
    loops: { type: 'string', default: '4' },
    'max-cost': { type: 'string' },
    seeded: { type: 'string' }
  }
})
const seconds = Number(values.seconds)
const runs = Number(values.runs)
const loops = Number(values.loops)
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')

/** A query family: `query(n)` grows with n; the largest admitted n is the one measured. */
interface Shape { name: string, max: number, query: (n: number, id: string) => string }

const aliases = (n: number, field: (i: number) => string): string => Array.from({ length: n }, (_, i) => `a${i}: ${field(i)}`).join(' ')

const SHAPES: Shape[] = [
  { name: 'people(n) { id name }', max: 1000, query: (n) => `{ people(limit: ${n}) { id name } }` },
  { name: 'people(n) { friends(10) { name } }', max: 1000, query: (n) => `{ people(limit: ${n}) { id friends(limit: 10) { name } } }` },
  { name: 'people(n) { friends(100) { name } }', max: 1000, query: (n) => `{ people(limit: ${n}) { id friends(limit: 100) { name } } }` },
  { name: 'people(n) { friends(10) { friends(10) { id } } }', max: 1000, query: (n) => `{ people(limit: ${n}) { friends(limit: 10) { friends(limit: 10) { id } } } }` },
  { name: 'people(n) { friends(10) { age email address } }', max: 1000, query: (n) => `{ people(limit: ${n}) { friends(limit: 10) { age email address { street city country } } } }` },
  { name: 'people(n) { age email address messages(20) { text person { name } } }', max: 1000, query: (n) => `{ people(limit: ${n}) { age email address { city } messages(limit: 20) { text sentAt person { name age } } } }` },
  { name: 'peopleConnection(first: n) { edges { node { friends(10) { name } } } }', max: 1000, query: (n) => `{ peopleConnection(first: ${n}) { edges { cursor node { name friends(limit: 10) { name } } } pageInfo { endCursor } } }` },
  { name: 'person { friends(100) { friends(n) { name } } }', max: 100, query: (n, id) => `{ person(id: "${id}") { friends(limit: 100) { friends(limit: ${n}) { name } } } }` },
  { name: 'n aliases of people(name: 2 letters, a scan)', max: 30, query: (n) => `{ ${aliases(n, (i) => `people(limit: 1000, name: "${String.fromCharCode(113 + (i % 8))}z") { id }`)} }` },
  { name: 'n aliases of people(name: 3 letters)', max: 30, query: (n) => `{ ${aliases(n, (i) => `people(limit: 1000, name: "a${String.fromCharCode(97 + (i % 26))}e") { id name }`)} }` }
]

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN

const dir = mkdtempSync(join(tmpdir(), 'people-bench-cost-'))
const databaseFile = join(dir, 'people.db')
const databaseUrl = `sqlite:${databaseFile}`
try {
  if (values.seeded !== undefined) {
    copyFileSync(values.seeded, databaseFile)
  } else {
    const { seedSeconds } = await seedBenchDatabase(databaseUrl, { people: Number(values.people), friends: Number(values.friends), messages: Number(values.messages) })
    process.stdout.write(`seeded ${values.people} people (${values.friends} friends, ${values.messages} messages each) in ${seedSeconds.toFixed(1)} s\n`)
  }
  const { base, server } = await startBenchServer(databaseUrl, ADMIN_PASSWORD, values['max-cost'] === undefined ? {} : { GRAPHQL_MAX_COST: values['max-cost'] })
  try {
    const heavyKey = await benchApiKey(base, ADMIN_PASSWORD)
    const otherKey = await benchApiKey(base, ADMIN_PASSWORD)
    const ask = async (query: string): Promise<{ status: number, ms: number, body: { errors?: Array<{ extensions?: { code?: string, maxCost?: number } }> } }> => {
      const started = performance.now()
      const response = await fetch(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': heavyKey }, body: JSON.stringify({ query }) })
      const body = await response.json() as { errors?: Array<{ extensions?: { code?: string, maxCost?: number } }> }
      return { status: response.status, ms: performance.now() - started, body }
    }
    const ids = (await (await fetch(`${base}/people?limit=1000`, { headers: { 'x-api-key': otherKey } })).json() as Array<{ id: string }>).map((p) => p.id)
    const someId = ids[0]!
    const admitted = async (query: string): Promise<boolean> => {
      const { status, body } = await ask(query)
      if (status === 200) return true
      if (body.errors?.[0]?.extensions?.code === 'QUERY_TOO_COSTLY') return false
      throw new Error(`unexpected answer ${status}: ${JSON.stringify(body).slice(0, 300)}`)
    }
    let budget: number | undefined
    const measured: Array<{ shape: string, n: number, median: number, max: number, cpu: number, query: string }> = []
    for (const shape of SHAPES) {
      // The largest n the budget admits (admission is monotonic in n).
      let low = 0
      let high = shape.max
      while (low < high) {
        const mid = Math.ceil((low + high) / 2)
        if (await admitted(shape.query(mid, someId))) low = mid
        else high = mid - 1
      }
      if (budget === undefined) {
        const { body } = await ask('{ people(limit: 1000) { friends(limit: 100) { friends(limit: 100) { id } } } }')
        budget = body.errors?.[0]?.extensions?.maxCost
        process.stdout.write(`cost budget: ${budget}\n\n`)
      }
      if (low === 0) {
        process.stdout.write(`${shape.name.padEnd(72)} not admitted even at n = 1\n`)
        continue
      }
      const query = shape.query(low, someId)
      const times: number[] = []
      const cpuBefore = cpuTimeOf(server.pid!)
      for (let i = 0; i < runs; i++) {
        const { status, ms } = await ask(query)
        if (status !== 200) throw new Error(`${shape.name} answered ${status}`)
        times.push(ms)
      }
      const cpu = (cpuTimeOf(server.pid!) - cpuBefore) / runs / 1000
      times.sort((a, b) => a - b)
      const row = { shape: shape.name, n: low, median: percentile(times, 0.5), max: times[times.length - 1]!, cpu, query }
      measured.push(row)
      process.stdout.write(`${shape.name.padEnd(72)} n = ${String(low).padStart(4)}  median ${row.median.toFixed(1).padStart(6)} ms  max ${row.max.toFixed(1).padStart(6)} ms  server CPU ${cpu.toFixed(1).padStart(6)} ms\n`)
    }
    const slowest = measured.reduce((a, b) => (b.cpu > a.cpu ? b : a))
    process.stdout.write(`\nslowest admitted query: ${slowest.shape}, n = ${slowest.n}: server CPU ${slowest.cpu.toFixed(1)} ms, wall median ${slowest.median.toFixed(1)} ms, max ${slowest.max.toFixed(1)} ms (${runs} runs, alone)\n`)
    process.stdout.write(`load average while measuring: ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} cores\n`)

    const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }) })
    const adminToken = (await login.json() as { access_token: string }).access_token
    /** The longest event-loop delay since the last call, in ms. */
    const loopHeldMs = async (): Promise<number> => {
      const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })).text()
      return Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN) * 1000
    }
    const randomId = () => ids[Math.floor(Math.random() * ids.length)] as string
    const reads = { name: 'GET /person/<id>', headers: { 'x-api-key': otherKey }, request: () => ({ path: `/person/${randomId()}` }) }
    await loopHeldMs()
    const alone = await run(base, reads, seconds, Number(values.connections))
    const aloneHeld = await loopHeldMs()
    process.stdout.write(`GET /person/<id> by another caller (${values.connections} connections, ${seconds} s):\n`)
    process.stdout.write(`  alone:                                  p50 ${alone.p50} ms, p99 ${alone.p99} ms, ${alone.requestsPerSecond} req/s, non-2xx ${alone.non2xx}; event loop held at most ${aloneHeld.toFixed(0)} ms\n`)
    for (const concurrent of [...new Set([1, loops])]) {
      const looping = { stop: false }
      const statuses = new Map<number, number>()
      const heavyLoops = Array.from({ length: concurrent }, async () => {
        while (!looping.stop) {
          const { status } = await ask(slowest.query)
          statuses.set(status, (statuses.get(status) ?? 0) + 1)
        }
      })
      await loopHeldMs()
      const meanwhile = await run(base, reads, seconds, Number(values.connections))
      const held = await loopHeldMs()
      looping.stop = true
      await Promise.all(heavyLoops)
      process.stdout.write(`  while one caller loops it, ${concurrent} at once: p50 ${meanwhile.p50} ms, p99 ${meanwhile.p99} ms, ${meanwhile.requestsPerSecond} req/s, non-2xx ${meanwhile.non2xx}; event loop held at most ${held.toFixed(0)} ms` +
        ` (the looping caller's answers: ${JSON.stringify(Object.fromEntries(statuses))})\n`)
    }
  } finally {
    await stopProcess(server)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
