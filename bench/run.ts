import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { createDatabase, migrateToLatest, seedDatabase } from '@people-service/infra'
import { freePort, printTable, run, saveResults, startProcess, stopProcess, type Result, type Scenario } from './lib.js'

/*
 * npm run bench -- [--people 100000] [--friends 20] [--messages 3] [--seconds 10] [--connections 50]
 * Seeds a fresh SQLite file, starts the real server and a bare Fastify
 * ceiling, runs each scenario with autocannon, prints one table of req/s,
 * latency and the ratio to the ceiling, and writes it to bench/results/.
 */
const { values } = parseArgs({
  options: {
    people: { type: 'string', default: '100000' },
    friends: { type: 'string', default: '20' },
    messages: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' }
  }
})
const people = Number(values.people)
const seconds = Number(values.seconds)
const connections = Number(values.connections)

const dir = mkdtempSync(join(tmpdir(), 'people-bench-'))
const databaseUrl = `sqlite:${join(dir, 'people.db')}`
try {
  const database = createDatabase({ url: databaseUrl, sqliteSynchronous: 'NORMAL' })
  await migrateToLatest(database)
  const started = performance.now()
  const { ids } = await seedDatabase(database, { people, friends: Number(values.friends), messages: Number(values.messages) })
  await database.close()
  process.stdout.write(`seeded ${people} people in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)

  const randomId = () => ids[Math.floor(Math.random() * ids.length)]
  const scenarios: Scenario[] = [
    { name: 'GET /person/<id>', request: () => ({ path: `/person/${randomId()}` }) },
    { name: 'GET /people?limit=100', request: () => ({ path: '/people?limit=100' }) }
  ]

  const ceilingPort = await freePort()
  const ceiling = await startProcess(['--import', 'tsx', new URL('./ceiling-server.ts', import.meta.url).pathname], { PORT: String(ceilingPort) }, `http://127.0.0.1:${ceilingPort}/hello`)
  const results: Result[] = []
  try {
    results.push(await run(`http://127.0.0.1:${ceilingPort}`, { name: 'ceiling: bare Fastify GET /hello', request: () => ({ path: '/hello' }) }, seconds, connections))
  } finally {
    await stopProcess(ceiling)
  }

  const port = await freePort()
  const server = await startProcess([new URL('../packages/server/dist/main.js', import.meta.url).pathname], {
    PORT: String(port), DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production'
  }, `http://127.0.0.1:${port}/health/ready`)
  try {
    for (const scenario of scenarios) results.push(await run(`http://127.0.0.1:${port}`, scenario, seconds, connections))
  } finally {
    await stopProcess(server)
  }

  const ceilingRate = results[0]!.requestsPerSecond
  for (const result of results) result.ratio = result.requestsPerSecond / ceilingRate
  printTable(results)
  const file = saveResults('bench', { people, seconds, connections, results })
  process.stdout.write(`written to ${file}\n`)
} finally {
  rmSync(dir, { recursive: true, force: true })
}
