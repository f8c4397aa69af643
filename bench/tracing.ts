import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { benchApiKey, printTable, run, seedBenchDatabase, startBenchServer, stopProcess, type Result } from './lib.js'

/*
 * npm run bench:tracing [-- --rounds 3 --seconds 8 --connections 10 --people 10000]
 *
 * What tracing costs: GET /person/<id> against the real server with tracing
 * off (no OTEL_* variable) and on (OTEL_EXPORTER_OTLP_ENDPOINT pointing at
 * an OTLP/HTTP receiver on loopback that accepts and drops what it gets,
 * every request sampled), in alternating rounds so that a machine whose load
 * drifts weighs on both alike. docs/OPERATIONS.md quotes a run.
 */

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '8' },
    connections: { type: 'string', default: '10' },
    people: { type: 'string', default: '10000' }
  }
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const connections = Number(values.connections)

// An OTLP/HTTP endpoint that takes every export: the cost measured is the service's, not a collector's.
let exports = 0
const receiver = createServer((request, response) => {
  request.resume()
  request.on('end', () => { exports++; response.writeHead(200, { 'content-type': 'application/json' }).end('{}') })
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`

const dir = mkdtempSync(join(tmpdir(), 'people-service-bench-tracing-'))
const databaseUrl = `sqlite:${join(dir, 'people.db')}`
const adminPassword = 'the bench admin password'
const { ids } = await seedBenchDatabase(databaseUrl, { people: Number(values.people), friends: 5, messages: 0 })
const randomId = () => ids[Math.floor(Math.random() * ids.length)]!

const settings = {
  off: {},
  on: { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: 'people-service-bench' }
} as const

const results: Result[] = []
let key: string | undefined
try {
  for (let round = 1; round <= rounds; round++) {
    for (const [name, env] of Object.entries(settings)) {
      const { base, server } = await startBenchServer(databaseUrl, adminPassword, env)
      try {
        // One key for every round: the database keeps it.
        key ??= await benchApiKey(base, adminPassword)
        const scenario = { name: `GET /person/<id>, tracing ${name}, round ${round}`, headers: { 'x-api-key': key }, request: () => ({ path: `/person/${randomId()}` }) }
        await run(base, scenario, 2, connections)
        results.push(await run(base, scenario, seconds, connections, server.pid))
      } finally {
        await stopProcess(server)
      }
    }
  }
} finally {
  receiver.close()
  rmSync(dir, { recursive: true, force: true })
}
printTable(results)
if (results.some((result) => result.non2xx > 0 || result.errors > 0)) throw new Error('some requests failed: the numbers measure something else')
const mean = (name: string) => {
  const of = results.filter((result) => result.scenario.includes(`tracing ${name},`))
  return of.reduce((sum, result) => sum + result.requestsPerSecond, 0) / of.length
}
const off = mean('off')
const on = mean('on')
console.log(`\nNode ${process.version}; mean of ${rounds} rounds: off ${Math.round(off)} req/s, on ${Math.round(on)} req/s (${((on / off - 1) * 100).toFixed(1)}%); ${exports} exports received`)
