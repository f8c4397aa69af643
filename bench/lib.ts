import { randomBytes } from 'node:crypto'
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import autocannon from 'autocannon'
import { createDatabase, migrateToLatest, seedDatabase, type SeedOptions } from '@people-service/infra'

/** The command-line options every benchmark takes: the seeded data and the load. */
export const BENCH_OPTIONS = {
  people: { type: 'string', default: '100000' },
  friends: { type: 'string', default: '20' },
  messages: { type: 'string', default: '3' },
  seconds: { type: 'string', default: '10' },
  connections: { type: 'string', default: '50' },
  // Seconds of each scenario run first and not recorded: the server's JIT
  // compiles its hot paths in the first tens of thousands of requests.
  warmup: { type: 'string', default: '2' }
} as const

export interface Scenario {
  name: string
  method?: 'GET' | 'POST'
  /** A fresh path (and body) per request, so the load is not one hot row. */
  request(): { path: string, body?: string }
  headers?: Record<string, string>
  /** The scenario of a minimal server, measured in the same run, that this one is compared with. */
  reference?: string
}

export interface Result {
  scenario: string
  requestsPerSecond: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Server CPU time (user + system) per request, in µs: what the server spent, whatever the load generator did. */
  cpuPerRequest?: number
  /** The load generator's CPU over the run, in % of the CPUs it may use. */
  generatorCpu?: number
  /** req/s over the ceiling's (bare Fastify) in the same run. */
  ratio?: number
  /** The reference scenario (a minimal server's) and req/s over its req/s in the same run. */
  reference?: string
  vsReference?: number
  /** Server CPU per request over the reference's: the quotient the targets are stated in. */
  cpuVsReference?: number
}

/** Resident memory of a process, in MB (Linux: /proc/<pid>/status). */
export const rssMbOf = (pid: number): number =>
  Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024)

/** CPU time a process has used so far, in µs (Linux: /proc/<pid>/stat, in clock ticks of 10 ms). */
export const cpuTimeOf = (pid: number): number => {
  // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}

/**
 * Migrates the (fresh) database at `url` and seeds it, timed; the database is
 * closed before the servers under test open it. A seed file is written with
 * synchronous=NORMAL: nothing of it needs to survive a power loss.
 */
export const seedBenchDatabase = async (url: string, options: SeedOptions): Promise<{ ids: string[], seedSeconds: number }> => {
  const database = createDatabase({ url, ...(url.startsWith('sqlite:') ? { sqliteSynchronous: 'NORMAL' as const } : {}) })
  try {
    await migrateToLatest(database)
    const started = performance.now()
    const { ids } = await seedDatabase(database, options)
    return { ids, seedSeconds: (performance.now() - started) / 1000 }
  } finally {
    await database.close()
  }
}

export const freePort = async (): Promise<number> => new Promise((resolve, reject) => {
  const server = createServer()
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number }
    server.close(() => resolve(port))
  })
  server.on('error', reject)
})

/** The CPUs the servers started by `startProcess` run on, once `pinCpus` has split them off. */
let serverCpus: string | undefined

/** The CPUs this process may run on (Linux: Cpus_allowed_list, e.g. `0-3,8`), in order. */
const allowedCpus = (): number[] => {
  const list = /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? ''
  return list.split(',').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number) as [number, number?]
    return Array.from({ length: to - from + 1 }, (_, i) => from + i)
  })
}

/**
 * Runs the servers under test on the first half of the CPUs this process may
 * use and this process, the load generator, on the other half (Linux, with
 * taskset). Left to itself, the scheduler of a 2-core machine now and then
 * puts both on one core, and the run reads low: GET /person/<id>, 10 s after
 * 2 s of warm-up, alternating between a 100k and a 1M file, gave
 * 19,600–28,200 req/s over six runs, the 1M file as often ahead as behind;
 * two whole runs of `npm run bench` the same day put the cost of 1M over
 * 100k at 34% unpinned and 8% pinned. (With SMT, the halves may share
 * cores.) Returns what it did, for the report.
 */
export const pinCpus = (): string => {
  const cpus = existsSync('/proc/self/status') ? allowedCpus() : []
  if (cpus.length < 2) return 'not pinned: fewer than two CPUs known'
  const half = Math.floor(cpus.length / 2)
  const servers = cpus.slice(0, half).join(',')
  const load = cpus.slice(half).join(',')
  // -a: every thread of this process, autocannon's and libuv's alike.
  const pinned = spawnSync('taskset', ['-a', '-p', '-c', load, String(process.pid)], { encoding: 'utf8' })
  if (pinned.error !== undefined) return `not pinned: ${pinned.error.message}`
  if (pinned.status !== 0) return `not pinned: taskset: ${pinned.stderr.trim()}`
  serverCpus = servers
  return `servers on CPU ${servers}, the load generator on CPU ${load}`
}

/** Starts a process and resolves once `readyUrl` answers 200. */
export const startProcess = async (args: string[], env: Record<string, string>, readyUrl: string): Promise<ChildProcess> => {
  // taskset execs node in its own place: the child's pid is the server's.
  const [command, commandArgs] = serverCpus === undefined
    ? [process.execPath, args]
    : ['taskset', ['-c', serverCpus, process.execPath, ...args]]
  const child = spawn(command, commandArgs, { env: { ...process.env, ...env }, stdio: ['ignore', 'inherit', 'inherit'] })
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${[command, ...commandArgs].join(' ')} exited with ${child.exitCode}`)
    const ok = await fetch(readyUrl).then((res) => res.ok, () => false)
    if (ok) return child
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  child.kill('SIGKILL')
  throw new Error(`${[command, ...commandArgs].join(' ')} did not become ready at ${readyUrl}`)
}

export const stopProcess = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null) return
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

/**
 * Requests built before the load starts and cycled through: a request built
 * per request (autocannon's `setupRequest`) costs the generator about as much
 * as the ceiling's server spends answering it, which halves the ceiling.
 */
const PREBUILT_REQUESTS = 1000

/** The share of its CPUs the generator may use before its figures are refused: past it the generator, not the server, sets the rate. */
export const GENERATOR_SATURATION = 0.9

/** CPUs this process (the load generator) may run on. */
const generatorCpus = (): number => (existsSync('/proc/self/status') ? allowedCpus().length : 1) || 1

export const run = async (baseUrl: string, scenario: Scenario, seconds: number, connections: number, serverPid?: number): Promise<Result> => {
  const requests = Array.from({ length: PREBUILT_REQUESTS }, () => {
    const { path, body } = scenario.request()
    return { method: scenario.method ?? 'GET', path, ...(body === undefined ? {} : { body }), ...(scenario.headers ? { headers: { ...scenario.headers } } : {}) }
  })
  const cpuBefore = serverPid === undefined ? 0 : cpuTimeOf(serverPid)
  const generatorBefore = process.cpuUsage()
  const started = performance.now()
  const result = await autocannon({ url: baseUrl, connections, duration: seconds, requests })
  const generatorUsage = process.cpuUsage(generatorBefore)
  const generatorShare = (generatorUsage.user + generatorUsage.system) / 1000 / (performance.now() - started) / generatorCpus()
  return {
    scenario: scenario.name,
    ...(scenario.reference === undefined ? {} : { reference: scenario.reference }),
    requestsPerSecond: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    generatorCpu: Math.round(generatorShare * 100),
    ...(serverPid === undefined ? {} : { cpuPerRequest: Math.round((cpuTimeOf(serverPid) - cpuBefore) / Math.max(1, result.requests.total)) })
  }
}

/** Whether the generator, not the server, was the limit of a result: its req/s and ratios say nothing of the server. */
export const generatorBound = (result: Result): boolean => (result.generatorCpu ?? 0) >= GENERATOR_SATURATION * 100

/**
 * The parts of one scenario's load as one result: `requestsPerSecond` as the
 * caller counts it (the parts' sum when they ran at once, their mean when one
 * followed another for equal times), CPU per request weighted by each part's
 * requests, the worse p50 and p99 of the parts, errors and non-2xx summed.
 */
export const combineParts = (scenario: string, parts: Result[], requestsPerSecond: number): Result => {
  const sum = (of: (part: Result) => number) => parts.reduce((total, part) => total + of(part), 0)
  const reference = parts[0]?.reference
  return {
    scenario,
    ...(reference === undefined ? {} : { reference }),
    requestsPerSecond,
    p50: Math.max(...parts.map((part) => part.p50)),
    p99: Math.max(...parts.map((part) => part.p99)),
    errors: sum((part) => part.errors),
    non2xx: sum((part) => part.non2xx),
    generatorCpu: Math.max(...parts.map((part) => part.generatorCpu ?? 0)),
    cpuPerRequest: Math.round(sum((part) => (part.cpuPerRequest ?? 0) * part.requestsPerSecond) / Math.max(1, sum((part) => part.requestsPerSecond)))
  }
}

/** Sets each result's ratio to the ceiling (the first result) and to its reference scenario, all of one run. */
export const compareWithinRun = (results: Result[]): void => {
  const byName = new Map(results.map((r) => [r.scenario, r]))
  const ceilingRate = results[0]!.requestsPerSecond
  for (const result of results) {
    result.ratio = result.requestsPerSecond / ceilingRate
    const reference = result.reference === undefined ? undefined : byName.get(result.reference)
    if (reference === undefined) continue
    result.vsReference = result.requestsPerSecond / reference.requestsPerSecond
    if (result.cpuPerRequest !== undefined && reference.cpuPerRequest) result.cpuVsReference = result.cpuPerRequest / reference.cpuPerRequest
  }
}

/** Prints rows as a table: the first column left-aligned, the others right-aligned. */
export const printRows = (rows: string[][]): void => {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)))
  for (const row of rows) process.stdout.write(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ') + '\n')
}

export const printTable = (results: Result[]): void => {
  const withReference = results.some((r) => r.vsReference !== undefined)
  const refused = (r: Result, figure: string) => (generatorBound(r) ? 'refused' : figure)
  printRows([['scenario', 'CPU µs/req', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'non-2xx', 'generator CPU', 'ratio', ...(withReference ? ['vs minimal', 'CPU vs minimal'] : [])],
    ...results.map((r) => [r.scenario, String(r.cpuPerRequest ?? ''), refused(r, String(r.requestsPerSecond)), String(r.p50), String(r.p99), String(r.errors), String(r.non2xx),
      `${r.generatorCpu ?? ''}%`, r.ratio === undefined ? '' : refused(r, r.ratio.toFixed(3)),
      ...(withReference ? [r.vsReference === undefined ? '' : refused(r, r.vsReference.toFixed(2)), r.cpuVsReference === undefined ? '' : `${r.cpuVsReference.toFixed(2)}×`] : [])])])
  const bound = results.filter(generatorBound)
  process.stdout.write(bound.length === 0
    ? `self-check: passed (the load generator stayed under ${GENERATOR_SATURATION * 100}% of its CPUs in every row)\n`
    : `self-check: FAILED, the load generator was saturated in ${bound.map((r) => r.scenario).join('; ')}: their req/s and ratios are refused (the CPU per request stands)\n`)
}

export const saveResults = (name: string, data: unknown): string => {
  const dir = new URL('./results/', import.meta.url)
  mkdirSync(dir, { recursive: true })
  const file = new URL(`${name}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir)
  writeFileSync(file, JSON.stringify(data, null, 2))
  return file.pathname
}

/** Node's arguments for the real server, as `npm start` and the Dockerfile run it (docs/OPERATIONS.md, memory). */
export const SERVER_ARGS = ['--max-semi-space-size=16', new URL('../packages/server/dist/main.js', import.meta.url).pathname]

/**
 * The environment of the real server as the benchmarks run it: production
 * mode, logs at warn, authentication on, rate limits high enough not to interfere.
 */
export const benchServerEnv = (port: number, databaseUrl: string, adminPassword: string): Record<string, string> => ({
  PORT: String(port),
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'warn',
  NODE_ENV: 'production',
  JWT_SECRET: randomBytes(32).toString('base64url'),
  ADMIN_PASSWORD: adminPassword,
  RATE_LIMIT_MAX: '10000000'
})

/**
 * The service's settings that `benchServerEnv` leaves to the environment and
 * that change what a run measures, as set there (non-empty); REDIS_URL only
 * as set or not, since it may hold a password. For the report.
 */
export const serviceSettingsFromEnv = (env: NodeJS.ProcessEnv = process.env): Record<string, string> => Object.fromEntries([
  'DATABASE_POOL_SIZE', 'SQLITE_SYNCHRONOUS', 'SQLITE_MMAP_MB', 'GRAPHQL_MAX_COST', 'GRAPHQL_JIT', 'GRAPHQL_SQL_PLAN',
  'MAX_EVENT_LOOP_DELAY_MS', 'API_KEY_CACHE_TTL_MS', 'USAGE_FLUSH_INTERVAL_MS', 'REDIS_URL'
].flatMap((name) => (env[name] ? [[name, name === 'REDIS_URL' ? '(set)' : env[name]!]] : [])))

/** The real server (`benchServerEnv`), started and ready. */
export const startBenchServer = async (databaseUrl: string, adminPassword: string, extra: Record<string, string> = {}) => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = await startProcess(SERVER_ARGS, { ...benchServerEnv(port, databaseUrl, adminPassword), ...extra }, `${base}/health/ready`)
  return { base, server }
}

/** Logs in as the admin and creates an API key with every people and message scope. */
export const benchApiKey = async (base: string, adminPassword: string): Promise<string> => {
  const login = await fetch(`${base}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: adminPassword }) })
  const token = (await login.json() as { access_token: string }).access_token
  const created = await fetch(`${base}/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'bench', scopes: ['people:read', 'people:write', 'messages:send'] })
  })
  return (await created.json() as { key: string }).key
}
