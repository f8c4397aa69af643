/*
 * GraphQL load test: a real server (its own process, SQLite file seeded with
 * people and friendships) under autocannon, with and without Mercurius' JIT.
 *
 *   npm run build && node --import tsx bench/graphql.ts [--people 5000] [--friends 10] [--seconds 10]
 *
 * Prints req/s and p99 latency per query and JIT setting. Load goes to
 * 127.0.0.1 only, for a bounded time.
 */
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { systemClock, uuidv7Generator, type Person } from '@people-service/domain'
import { buildApp, inProcessMessageBus } from '@people-service/http'
import { createDatabase, createRepositories, migrateToLatest } from '@people-service/infra'

const { values: args } = parseArgs({
  options: {
    serve: { type: 'string' },
    jit: { type: 'string', default: 'off' },
    people: { type: 'string', default: '5000' },
    friends: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' }
  }
})

/** Child process: serve the seeded database, report the port, run until killed. */
const serve = async (path: string, jit: boolean): Promise<void> => {
  const database = createDatabase({ url: `sqlite:${path}`, sqliteSynchronous: 'NORMAL' })
  const messageBus = inProcessMessageBus()
  const app = await buildApp({
    ports: { ...createRepositories(database), clock: systemClock, ids: uuidv7Generator(), events: messageBus.events },
    messageBus,
    // As deployed: graphql-js skips its development-only checks, introspection is off.
    production: true,
    graphqlJit: jit ? 1 : false
  })
  await app.listen({ host: '127.0.0.1', port: 0 })
  const address = app.server.address()
  process.send?.({ port: typeof address === 'object' && address ? address.port : 0 })
  process.on('SIGTERM', () => {
    app.close().then(() => database.close()).then(() => process.exit(0), () => process.exit(1))
  })
}

/** Inserts people and friendships through the repositories, in concurrent batches. */
const seed = async (path: string, people: number, friendsEach: number): Promise<string[]> => {
  const database = createDatabase({ url: `sqlite:${path}`, sqliteSynchronous: 'NORMAL' })
  await migrateToLatest(database)
  const repositories = createRepositories(database)
  const ids = uuidv7Generator()
  const now = new Date()
  const everyone: string[] = []
  const BATCH = 500
  for (let start = 0; start < people; start += BATCH) {
    const batch: Person[] = []
    for (let i = start; i < Math.min(people, start + BATCH); i++) {
      batch.push({ id: ids.next(), name: `Person ${i}`, age: i % 100, email: `p${i}@example.org`, address: null, createdAt: now, updatedAt: now })
    }
    await Promise.all(batch.map((p) => repositories.people.insert(p)))
    everyone.push(...batch.map((p) => p.id))
  }
  const pairs: Array<[string, string]> = []
  for (let i = 0; i < people; i++) {
    // Half the friends ahead, half behind after mutual linking: about `friendsEach` each.
    for (let k = 1; k <= Math.ceil(friendsEach / 2); k++) pairs.push([everyone[i]!, everyone[(i + k * 7) % people]!])
  }
  for (let start = 0; start < pairs.length; start += BATCH) {
    await Promise.all(pairs.slice(start, start + BATCH).map(([a, b]) => repositories.friendships.add(a, b, now)))
  }
  await database.close()
  return everyone
}

const startServer = (path: string, jit: boolean): Promise<{ child: ChildProcess, url: string }> =>
  new Promise((resolve, reject) => {
    const child = fork(new URL(import.meta.url).pathname, ['--serve', path, '--jit', jit ? 'on' : 'off'], { execArgv: ['--import', 'tsx'], env: { ...process.env, NODE_ENV: 'production' } })
    child.once('message', (message) => resolve({ child, url: `http://127.0.0.1:${(message as { port: number }).port}/graphql` }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)))
  })

interface Scenario { name: string, body: () => string }

const measure = async (url: string, scenario: Scenario, seconds: number, connections: number) => {
  const run = (duration: number) => autocannon({
    url,
    method: 'POST',
    connections,
    duration,
    headers: { 'content-type': 'application/json' },
    requests: [{ setupRequest: (request) => ({ ...request, body: scenario.body() }) }]
  })
  await run(2) // warm-up: caches, JIT compilation
  const result = await run(seconds)
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`${scenario.name}: ${result.non2xx} non-2xx, ${result.errors} errors`)
  return { reqPerSec: Math.round(result.requests.average), p99: result.latency.p99 }
}

const main = async (): Promise<void> => {
  const people = Number(args.people)
  const dir = mkdtempSync(join(tmpdir(), 'people-bench-'))
  const path = join(dir, 'people.db')
  try {
    process.stdout.write(`seeding ${people} people with about ${args.friends} friends each… `)
    const ids = await seed(path, people, Number(args.friends))
    process.stdout.write('done\n')
    const pick = (): string => ids[Math.floor(Math.random() * ids.length)]!
    const scenarios: Scenario[] = [
      {
        name: 'person(id) { name age friends(limit: 10) { name } }',
        body: () => JSON.stringify({ query: 'query ($id: ID!) { person(id: $id) { name age friends(limit: 10) { name } } }', variables: { id: pick() } })
      },
      {
        name: 'people(limit: 100) { name friends(limit: 10) { name } }',
        body: () => JSON.stringify({ query: '{ people(limit: 100) { name friends(limit: 10) { name } } }' })
      }
    ]
    const rows: string[] = []
    for (const jit of [false, true]) {
      const { child, url } = await startServer(path, jit)
      try {
        for (const scenario of scenarios) {
          const { reqPerSec, p99 } = await measure(url, scenario, Number(args.seconds), Number(args.connections))
          rows.push(`| ${scenario.name} | ${jit ? 'on' : 'off'} | ${reqPerSec} | ${p99} ms |`)
        }
      } finally {
        child.removeAllListeners('exit')
        child.kill('SIGTERM')
      }
    }
    process.stdout.write(['| query | JIT | req/s | p99 |', '|---|---|---|---|', ...rows].join('\n') + '\n')
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

if (args.serve) await serve(args.serve, args.jit === 'on')
else await main()
