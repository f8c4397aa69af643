/*
 * GET /person/<id> throughput: the service before authentication existed
 * (the foundation commit, built from git into a temporary directory) next to
 * this tree's server called with an API key and with a bearer token, all in
 * one run on this machine, so the numbers compare.
 *
 *   npm run bench                      (10 s per target, 50 connections)
 *   BENCH_SECONDS=5 BENCH_CONNECTIONS=20 BENCH_BASELINE_REF=<commit> npm run bench
 *
 * Every server listens on 127.0.0.1 only and is stopped at the end.
 */
import { execFileSync, execSync, spawn, type ChildProcess } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
// The last commit before authentication: the foundation's service.
const BASELINE_REF = process.env.BENCH_BASELINE_REF ?? '669526a'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)
// Targets take turns, round after round, so a change in the machine's load
// (other processes) spreads over all of them instead of biasing one.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const ADMIN_PASSWORD = 'bench admin password'

const work = mkdtempSync(join(tmpdir(), 'people-service-bench-'))
const children: ChildProcess[] = []

const log = (message: string) => process.stderr.write(`${message}\n`)

/** The baseline's sources from git, with this tree's installed packages (its own workspace packages excepted). */
const buildBaseline = (): string => {
  const dir = join(work, 'baseline')
  mkdirSync(dir)
  execSync(`git -C ${JSON.stringify(ROOT)} archive ${BASELINE_REF} | tar -x -C ${JSON.stringify(dir)}`)
  mkdirSync(join(dir, 'node_modules', '@people-service'), { recursive: true })
  for (const entry of readdirSync(join(ROOT, 'node_modules'))) {
    if (entry !== '@people-service') symlinkSync(join(ROOT, 'node_modules', entry), join(dir, 'node_modules', entry))
  }
  for (const pkg of readdirSync(join(dir, 'packages'))) {
    symlinkSync(join('..', '..', 'packages', pkg), join(dir, 'node_modules', '@people-service', pkg))
  }
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b'], { cwd: dir, stdio: 'inherit' })
  return dir
}

/**
 * CPU seconds a process has used (user + system), from /proc: unlike
 * requests per second it hardly depends on what else the machine is doing.
 */
const cpuSeconds = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

interface Server { url: string, pid: number }

const startServer = async (name: string, cwd: string, port: number, env: Record<string, string>): Promise<Server> => {
  const child = spawn(process.execPath, ['packages/server/dist/main.js'], {
    cwd,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: `sqlite:${join(work, `${name}.db`)}`, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  children.push(child)
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/health/live`).then((r) => r.ok, () => false)) return { url, pid: child.pid! }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${name} did not start`)
}

const post = async (url: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${await response.text()}`)
  return response.json() as Promise<Record<string, string>>
}

const PERSON = { name: 'Ada Lovelace', age: 36, email: 'ada@example.org', address: { street: "12 St James's Square", city: 'London', country: 'UK' } }

interface Target { name: string, server: Server, url: string, headers: Record<string, string> }
interface Sample { rps: number, p50: number, p99: number, non2xx: number, errors: number, cpuMsPer1000: number }

const measure = async ({ server, url, headers }: Target, duration: number): Promise<Sample> => {
  const cpu = cpuSeconds(server.pid)
  const result = await autocannon({ url, headers, connections: CONNECTIONS, duration })
  const used = cpuSeconds(server.pid) - cpu
  return {
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    cpuMsPer1000: (used * 1000) / (result.requests.total / 1000)
  }
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

try {
  log(`building the baseline ${BASELINE_REF} in ${work} …`)
  const baselineDir = buildBaseline()
  const baseline = await startServer('baseline', baselineDir, 39_101, {})
  const current = await startServer('current', ROOT, 39_102, {
    JWT_SECRET: 'bench-only-secret-bench-only-secret-bench-only',
    ADMIN_PASSWORD,
    // Budgets are counted on every request but never reached by this run.
    RATE_LIMIT_MAX: '10000000'
  })

  const basePerson = await post(baseline.url, '/person', PERSON)
  const { access_token: token } = await post(current.url, '/auth/login', { username: 'admin', password: ADMIN_PASSWORD })
  const bearer = { authorization: `Bearer ${token}` }
  const { key } = await post(current.url, '/api-keys', { name: 'bench', scopes: ['people:read'], rateLimit: 1_000_000 }, bearer)
  const currentPerson = await post(current.url, '/person', PERSON, bearer)

  const targets: Target[] = [
    { name: `no auth (${BASELINE_REF})`, server: baseline, url: `${baseline.url}/person/${basePerson.id}`, headers: {} },
    { name: 'API key', server: current, url: `${current.url}/person/${currentPerson.id}`, headers: { 'x-api-key': key! } },
    { name: 'bearer token', server: current, url: `${current.url}/person/${currentPerson.id}`, headers: bearer }
  ]
  // Warm-up: the JIT and the caches in the same state for every target.
  for (const target of targets) await measure(target, 2)
  const samples = new Map<Target, Sample[]>(targets.map((target) => [target, []]))
  for (let round = 1; round <= ROUNDS; round++) {
    for (const target of targets) {
      const sample = await measure(target, SECONDS)
      samples.get(target)!.push(sample)
      log(`round ${round}: ${target.name}: ${sample.rps.toFixed(0)} req/s, ${sample.cpuMsPer1000.toFixed(0)} ms CPU per 1000 requests`)
    }
  }

  const rows = targets.map((target) => {
    const list = samples.get(target)!
    return {
      name: target.name,
      rps: median(list.map((s) => s.rps)),
      cpu: median(list.map((s) => s.cpuMsPer1000)),
      p50: median(list.map((s) => s.p50)),
      p99: median(list.map((s) => s.p99)),
      failed: list.reduce((sum, s) => sum + s.non2xx + s.errors, 0)
    }
  })
  const base = rows[0]!
  console.log(`\nGET /person/<id>: ${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections, medians; node ${process.version}\n`)
  console.log('| target | req/s | vs no auth | server CPU ms / 1000 req | vs no auth | p50 ms | p99 ms | non-2xx + errors |')
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|')
  for (const row of rows) {
    const rps = `${((row.rps / base.rps) * 100).toFixed(0)} %`
    const cpu = `${((row.cpu / base.cpu) * 100).toFixed(0)} %`
    console.log(`| ${row.name} | ${row.rps.toFixed(0)} | ${rps} | ${row.cpu.toFixed(0)} | ${cpu} | ${row.p50} | ${row.p99} | ${row.failed} |`)
  }
} finally {
  for (const child of children) child.kill('SIGTERM')
  await new Promise((resolve) => setTimeout(resolve, 500))
  rmSync(work, { recursive: true, force: true })
}
