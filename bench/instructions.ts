import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { parseArgs } from 'node:util'
import { benchApiKey, benchServerEnv, freePort, printRows, saveResults, seedBenchDatabase, SERVER_ARGS, stopProcess } from './lib.js'

/*
 * npm run bench:instructions -- [--people 100000] [--friends 20] [--warmup 2000] [--requests 2000]
 *                                [--scenarios get,post] [--keep <dir>]
 *
 * Counts the instructions the server executes per request, with valgrind's
 * callgrind: a figure that repeats to a fraction of a percent on a shared
 * machine, where req/s do not. Seeds a fresh SQLite file, starts the real
 * server under callgrind as `npm run bench` starts it (production mode, logs
 * at warn, an API key, rate limits on but high) with instrumentation off, and
 * for each scenario sends `--warmup` requests (V8 compiles the hot paths),
 * then switches instrumentation on, zeroes the counters, sends `--requests`
 * requests one after another, and dumps the counts. Prints instructions per
 * request on the event-loop thread (what a request costs the thread that
 * serves everything) and on all threads (adds V8's compiler and garbage
 * collector helpers and libuv's pool, which vary more from run to run).
 *
 * Under valgrind the server runs some 50 times slower, so work it does per
 * second whatever the load (load shedding samples the event loop's delay
 * every second, timers) lands on far fewer requests than in production, and
 * more so when the machine is busy. The script measures that first, for
 * `--idle` seconds with no requests, and also prints each scenario net of
 * it (its rate times the scenario's duration): the figure that repeats.
 *
 * `--keep <dir>` keeps the callgrind files there, one per scenario and
 * thread, for `callgrind_annotate`.
 */
const { values } = parseArgs({
  options: {
    people: { type: 'string', default: '100000' },
    friends: { type: 'string', default: '20' },
    messages: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '2000' },
    scenarios: { type: 'string', default: 'get,post' },
    idle: { type: 'string', default: '10' },
    keep: { type: 'string' },
    help: { type: 'boolean', default: false }
  }
})
if (values.help) {
  process.stdout.write('npm run bench:instructions -- [--people 100000] [--friends 20] [--messages 3] [--warmup 2000] [--requests 2000] [--scenarios get,post] [--idle 10] [--keep <dir>]\n')
  process.exit(0)
}
const wholeNumber = (name: keyof typeof values): number => {
  const value = Number(values[name])
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} takes a whole number, not ${String(values[name])}`)
  return value
}
const people = wholeNumber('people')
const warmup = wholeNumber('warmup')
const requests = wholeNumber('requests')
const idleSeconds = wholeNumber('idle')
if (requests < 1) throw new Error('--requests must be at least 1')
const run = promisify(execFile)

interface Scenario {
  name: string
  method: 'GET' | 'POST'
  next(): { path: string, body?: string }
}

const SCENARIO_NAMES = ['get', 'post'] as const
const chosen = String(values.scenarios).split(',')
for (const name of chosen) if (!(SCENARIO_NAMES as readonly string[]).includes(name)) throw new Error(`--scenarios takes ${SCENARIO_NAMES.join(', ')}, not ${name}`)

// A fixed sequence of ids, so that two runs read the same rows in the same order.
const sequenceOver = (ids: string[]): () => string => {
  let state = 0x2545f491
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0
    return ids[state % ids.length] as string
  }
}

/** Starts the server under callgrind, instrumentation off until a scenario switches it on. */
const startUnderCallgrind = async (outDir: string, databaseUrl: string, adminPassword: string): Promise<{ child: ChildProcess, base: string }> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const child = spawn('valgrind', [
    '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes',
    `--callgrind-out-file=${join(outDir, 'callgrind.out')}`,
    process.execPath, ...SERVER_ARGS
  ], {
    env: {
      ...process.env,
      ...benchServerEnv(port, databaseUrl, adminPassword),
      // Under valgrind the event loop runs some 50 times slower, and a second
      // in which its delay monitor took no sample counts as an endless delay
      // (@fastify/under-pressure): with shedding on, requests got 503 at
      // random (60000 had been set, and was passed that way).
      MAX_EVENT_LOOP_DELAY_MS: '0'
    },
    stdio: ['ignore', 'inherit', 'pipe']
  })
  // Valgrind's own chatter goes to stderr: kept quiet unless the start fails.
  let stderr = ''
  child.stderr?.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-20_000) })
  const deadline = Date.now() + 300_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server under callgrind exited with ${child.exitCode}:\n${stderr}`)
    if (await fetch(`${base}/health/ready`).then((res) => res.ok, () => false)) return { child, base }
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
  child.kill('SIGKILL')
  throw new Error(`the server under callgrind did not become ready:\n${stderr}`)
}

const control = async (pid: number, ...args: string[]): Promise<void> => {
  await run('callgrind_control', [...args, String(pid)])
}

/** Instructions in one dump file: its `totals:` (or `summary:`) line. */
const instructionsIn = (file: string): number => {
  const match = /^(?:totals|summary): (\d+)/m.exec(readFileSync(file, 'utf8'))
  return match === null ? 0 : Number(match[1])
}

const send = async (base: string, headers: Record<string, string>, scenario: Scenario, count: number): Promise<void> => {
  for (let i = 0; i < count; i++) {
    const { path, body } = scenario.next()
    const response = await fetch(`${base}${path}`, { method: scenario.method, headers, ...(body === undefined ? {} : { body }) })
    const answer = await response.text()
    if (!response.ok) throw new Error(`${scenario.method} ${path} answered ${response.status}: ${answer.slice(0, 300)}`)
  }
}

const dir = mkdtempSync(join(tmpdir(), 'people-instructions-'))
const outDir = values.keep ?? dir
mkdirSync(outDir, { recursive: true })
const adminPassword = randomBytes(18).toString('base64url')
let server: ChildProcess | undefined
try {
  const databaseUrl = `sqlite:${join(dir, 'people.db')}`
  const { ids, seedSeconds } = await seedBenchDatabase(databaseUrl, { people, friends: Number(values.friends), messages: Number(values.messages) })
  process.stdout.write(`seeded ${people} people in ${seedSeconds.toFixed(1)} s; starting the server under callgrind\n`)
  const started = await startUnderCallgrind(outDir, databaseUrl, adminPassword)
  server = started.child
  const pid = server.pid!
  const key = await benchApiKey(started.base, adminPassword)
  const nextId = sequenceOver(ids)
  let created = 0
  const scenarios: Record<typeof SCENARIO_NAMES[number], Scenario> = {
    get: { name: 'GET /person/<id>', method: 'GET', next: () => ({ path: `/person/${nextId()}` }) },
    post: { name: 'POST /person', method: 'POST', next: () => ({ path: '/person', body: JSON.stringify({ name: `Bench ${created++}`, age: 30 }) }) }
  }

  /** Runs `phase` with instrumentation on and returns the event loop's and all threads' instructions, and the seconds it took. */
  const counted = async (name: string, phase: () => Promise<void>): Promise<{ eventLoop: number, all: number, seconds: number, files: string[] }> => {
    await control(pid, '--instr=on')
    await control(pid, '--zero')
    const started = performance.now()
    await phase()
    const seconds = (performance.now() - started) / 1000
    const before = new Set(readdirSync(outDir))
    await control(pid, `--dump=${name}`)
    await control(pid, '--instr=off')
    // One file per thread: callgrind.out.<dump>-<thread>; thread 01 runs the event loop.
    const files = readdirSync(outDir).filter((file) => file.startsWith('callgrind.out') && !before.has(file)).sort()
    const perThread = files.map((file) => ({ file, instructions: instructionsIn(join(outDir, file)) }))
    return {
      eventLoop: perThread.find(({ file }) => file.endsWith('-01'))?.instructions ?? 0,
      all: perThread.reduce((sum, { instructions }) => sum + instructions, 0),
      seconds,
      files
    }
  }

  // What the server does per second with no request at all.
  const idle = idleSeconds === 0
    ? { eventLoop: 0, all: 0, seconds: 1, files: [] }
    : await counted('idle', () => new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000)))
  const idlePerSecond = { eventLoop: idle.eventLoop / idle.seconds, all: idle.all / idle.seconds }

  const perRequest = (instructions: number): string => Math.round(instructions / requests).toLocaleString('en')
  const rows: string[][] = [['scenario', 'requests', 'seconds', 'instructions/req (event loop)', 'net of idle work', 'all threads', 'all threads, net']]
  const results = []
  for (const name of chosen as Array<typeof SCENARIO_NAMES[number]>) {
    const scenario = scenarios[name]
    const headers = { 'x-api-key': key, ...(scenario.method === 'POST' ? { 'content-type': 'application/json' } : {}) }
    await send(started.base, headers, scenario, warmup)
    const phase = await counted(name, () => send(started.base, headers, scenario, requests))
    const net = { eventLoop: phase.eventLoop - idlePerSecond.eventLoop * phase.seconds, all: phase.all - idlePerSecond.all * phase.seconds }
    results.push({
      scenario: scenario.name,
      requests,
      seconds: phase.seconds,
      eventLoop: Math.round(phase.eventLoop / requests),
      eventLoopNet: Math.round(net.eventLoop / requests),
      allThreads: Math.round(phase.all / requests),
      allThreadsNet: Math.round(net.all / requests),
      files: phase.files
    })
    rows.push([scenario.name, String(requests), phase.seconds.toFixed(1), perRequest(phase.eventLoop), perRequest(net.eventLoop), perRequest(phase.all), perRequest(net.all)])
  }
  process.stdout.write(`\n${people} people, ${warmup} warm-up and ${requests} measured requests per scenario, one at a time:\n`)
  printRows(rows)
  process.stdout.write(`idle: ${Math.round(idlePerSecond.eventLoop).toLocaleString('en')} instructions per second on the event loop, ${Math.round(idlePerSecond.all).toLocaleString('en')} on all threads\n`)
  const file = saveResults('instructions', { people, warmup, requests, idlePerSecond, results })
  process.stdout.write(`written to ${file}${values.keep === undefined ? '' : `; callgrind files in ${outDir}`}\n`)
} finally {
  if (server !== undefined) await stopProcess(server)
  rmSync(dir, { recursive: true, force: true })
}
