import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { benchApiKey, rssMbOf, seedBenchDatabase, startBenchServer, stopProcess } from './lib.js'

/*
 * npm run test:soak -- [--minutes 5] [--people 10000] [--load 0.7]
 *
 * Measures the capacity of a mixed REST + GraphQL load (reads and writes),
 * then holds `load` of it for `minutes`, in 30-second windows. Passes when
 * there are no errors, the p99 of the last window is within 2x of the first
 * after warm-up, RSS grew less than 10% after warm-up, and file descriptors
 * did not grow. Exits 1 otherwise.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '5' },
    people: { type: 'string', default: '10000' },
    load: { type: 'string', default: '0.7' },
    connections: { type: 'string', default: '20' }
  }
})
const WINDOW_SECONDS = 30
const windows = Math.max(2, Math.round((Number(values.minutes) * 60) / WINDOW_SECONDS))
const connections = Number(values.connections)
const ADMIN_PASSWORD = randomBytes(18).toString('base64url')

const procStat = (pid: number) => ({
  rssMb: rssMbOf(pid),
  fds: readdirSync(`/proc/${pid}/fd`).length
})

/**
 * File descriptors once the window's connections are closed: sampled the
 * moment autocannon stops, the count still holds sockets being torn down and
 * swings by a connection count. Settled means two equal readings 200 ms apart.
 */
const settledFds = async (pid: number): Promise<number> => {
  let previous = -1
  for (let i = 0; i < 25; i++) {
    const { fds } = procStat(pid)
    if (fds === previous) return fds
    previous = fds
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return previous
}

const dir = mkdtempSync(join(tmpdir(), 'people-soak-'))
const databaseUrl = `sqlite:${join(dir, 'people.db')}`
let failed = false
try {
  const { ids } = await seedBenchDatabase(databaseUrl, { people: Number(values.people), friends: 10, messages: 2 })

  const { base, server } = await startBenchServer(databaseUrl, ADMIN_PASSWORD)
  try {
    const key = await benchApiKey(base, ADMIN_PASSWORD)
    const randomId = () => ids[Math.floor(Math.random() * ids.length)] as string
    const personQuery = encodeURIComponent('query ($id: ID!) { person(id: $id) { name friends(limit: 5) { name } } }')
    // The mix: mostly reads, a fifth writes, a fifth GraphQL.
    const mix: Array<() => { method: 'GET' | 'POST' | 'PUT', path: string, body?: string }> = [
      () => ({ method: 'GET', path: `/person/${randomId()}` }),
      () => ({ method: 'GET', path: `/person/${randomId()}` }),
      () => ({ method: 'GET', path: '/people?limit=50' }),
      () => ({ method: 'GET', path: `/person/${randomId()}/friends` }),
      () => ({ method: 'GET', path: `/person/${randomId()}/messages?limit=10` }),
      () => ({ method: 'GET', path: `/graphql?query=${personQuery}&variables=${encodeURIComponent(JSON.stringify({ id: randomId() }))}` }),
      () => ({ method: 'POST', path: '/graphql', body: JSON.stringify({ query: '{ people(limit: 20) { name } }' }) }),
      () => ({ method: 'POST', path: '/person', body: JSON.stringify({ name: `Soak ${Math.random()}` }) }),
      () => ({ method: 'POST', path: '/message', body: JSON.stringify({ personId: randomId(), text: 'soak' }) }),
      () => ({ method: 'PUT', path: `/person/${randomId()}/friends/${randomId()}` })
    ]
    const attack = (seconds: number, overallRate?: number) => autocannon({
      url: base,
      connections,
      duration: seconds,
      ...(overallRate ? { overallRate } : {}),
      requests: [{
        setupRequest: (request) => {
          const next = mix[Math.floor(Math.random() * mix.length)]!()
          // autocannon keeps a connection's previous Content-Length when a
          // request has no body; say 0 explicitly, or the server waits for bytes.
          const { body: _previous, ...rest } = request
          return next.body
            ? { ...rest, method: next.method, path: next.path, body: next.body, headers: { 'x-api-key': key, 'content-type': 'application/json' } }
            : { ...rest, method: next.method, path: next.path, headers: { 'x-api-key': key, 'content-length': '0' } }
        }
      }]
    })
    const capacity = Math.round((await attack(10)).requests.average)
    const rate = Math.round(capacity * Number(values.load))
    process.stdout.write(`capacity ${capacity} req/s; holding ${rate} req/s for ${windows} windows of ${WINDOW_SECONDS} s\n`)
    process.stdout.write('window  req/s   p50   p99  errors                5xx  rss MB  fds\n')
    const rows: Array<{ p99: number, rssMb: number, fds: number, errors: number }> = []
    for (let w = 0; w < windows; w++) {
      const result = await attack(WINDOW_SECONDS, rate)
      // PUT of a random pair may name the same person twice (400): a client error, not a failure.
      const serverErrors = result['5xx'] ?? 0
      const { rssMb } = procStat(server.pid!)
      const fds = await settledFds(server.pid!)
      rows.push({ p99: result.latency.p99, rssMb, fds, errors: result.errors + result.timeouts + serverErrors })
      process.stdout.write(`${String(w + 1).padStart(6)}  ${String(Math.round(result.requests.average)).padStart(5)}  ${String(result.latency.p50).padStart(4)}  ${String(result.latency.p99).padStart(4)}  ${String(result.errors + result.timeouts).padStart(6)}  ${String(serverErrors).padStart(17)}  ${String(rssMb).padStart(6)}  ${String(fds).padStart(3)}\n`)
    }
    const warm = rows[Math.min(1, rows.length - 1)]!
    const last = rows[rows.length - 1]!
    const checks = [
      ['no errors', rows.every((r) => r.errors === 0)],
      [`p99 stable (${warm.p99} → ${last.p99} ms)`, last.p99 <= Math.max(2 * warm.p99, warm.p99 + 5)],
      [`RSS growth under 10% after warm-up (${warm.rssMb} → ${last.rssMb} MB)`, last.rssMb <= warm.rssMb * 1.1],
      [`no file-descriptor growth (${warm.fds} → ${last.fds})`, last.fds <= warm.fds + 2]
    ] as const
    for (const [name, ok] of checks) {
      process.stdout.write(`${ok ? 'ok    ' : 'FAILED'} ${name}\n`)
      if (!ok) failed = true
    }
  } finally {
    await stopProcess(server)
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
