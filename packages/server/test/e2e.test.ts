import { existsSync, readFileSync } from 'node:fs'
import { request as httpRequest, Agent } from 'node:http'
import { connect, type Socket } from 'node:net'
import { join } from 'node:path'
import t from 'tap'
import { ADMIN_PASSWORD } from './helper.js'
import { adminHeaders, startServerProcess, type ServerProcess } from './server-process.js'

let credentials: Record<string, string> = {}

const json = async (url: string, init: RequestInit = {}) => {
  const res = await fetch(url, { ...init, headers: { 'content-type': 'application/json', ...credentials, ...init.headers } })
  return { status: res.status, headers: res.headers, body: await res.json() as Record<string, unknown> & Array<Record<string, unknown>> }
}

t.test('the real server serves the resource API over HTTP on a SQLite file', async (t) => {
  const server = await startServerProcess(t)
  const base = server.url
  t.equal((await json(`${base}/people`)).status, 401, 'nothing without credentials')
  credentials = await adminHeaders(base)
  t.ok(existsSync(join(server.dataDir, 'people.db')), 'the database file was created')

  const ada = await json(`${base}/person`, { method: 'POST', body: JSON.stringify({ name: 'Ada Lovelace', age: 36, address: { city: 'London' } }) })
  t.equal(ada.status, 201)
  t.equal(ada.headers.get('location'), `/person/${ada.body.id}`)
  t.match(ada.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
  const bob = await json(`${base}/person`, { method: 'POST', body: JSON.stringify({ name: 'Bob' }) })

  t.match((await json(`${base}/person/${ada.body.id}`)).body, { name: 'Ada Lovelace', age: 36, address: { city: 'London', street: null } })
  t.equal((await json(`${base}/person/${ada.body.id}`, { method: 'PUT', body: JSON.stringify({ age: 37 }) })).body.age, 37)
  t.equal((await json(`${base}/person/${ada.body.id}/friends/${bob.body.id}`, { method: 'PUT' })).status, 200)
  t.same((await json(`${base}/person/${bob.body.id}/friends`)).body, [{ id: ada.body.id, name: 'Ada Lovelace' }])
  const message = await json(`${base}/message`, { method: 'POST', body: JSON.stringify({ personId: bob.body.id, text: 'hi' }) })
  t.equal(message.status, 201)
  t.equal((await json(`${base}/person/${bob.body.id}/messages`)).body[0]?.text, 'hi')
  const people = await json(`${base}/people?limit=1`)
  t.equal(people.body.length, 1)
  t.match(people.headers.get('link'), /^<\/people\?limit=1&cursor=[\w-]+>; rel="next"$/)
  const notAllowed = await json(`${base}/people`, { method: 'DELETE' })
  t.equal(notAllowed.status, 405)
  t.equal(notAllowed.headers.get('allow'), 'GET, HEAD')
  t.equal((await json(`${base}/nothing-here`)).status, 404)
  t.equal((await json(`${base}/person`, { method: 'POST', body: '{"name":' })).status, 400)
  t.equal((await json(`${base}/person/${ada.body.id}`, { method: 'DELETE' })).status, 200)
  t.equal((await json(`${base}/person/${ada.body.id}`)).status, 404)
})

t.test('logging in over and over spends the username\'s password checks: then 429, with no password checked', async (t) => {
  // LOGIN_RATE_LIMIT_MAX=2: two failures, and 5 × 2 = 10 checks, per username per window.
  const server = await startServerProcess(t, { LOGIN_RATE_LIMIT_MAX: '2' })
  const login = async () => {
    const started = performance.now()
    const response = await fetch(`${server.url}/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }) })
    return { status: response.status, body: await response.json() as { message?: string }, retryAfter: response.headers.get('retry-after'), ms: performance.now() - started }
  }
  const logins = []
  for (let i = 0; i < 11; i++) logins.push(await login())
  t.same(logins.map((response) => response.status), [...Array<number>(10).fill(200), 429])
  const refused = logins[10]!
  t.match(refused.body.message, /too many logins for this username/)
  t.ok(Number(refused.retryAfter) > 0, 'with Retry-After')
  const quickestCheck = Math.min(...logins.slice(0, 10).map((response) => response.ms))
  t.ok(refused.ms < quickestCheck, `refused in ${refused.ms.toFixed(1)} ms, before scrypt (each check took ${quickestCheck.toFixed(0)} ms or more)`)
})

t.test('behind a trusted proxy, an IPv6 client moving about its /56 spends one budget of failed logins', async (t) => {
  // LOGIN_RATE_LIMIT_MAX=1: one failure per username, 5 per client.
  const server = await startServerProcess(t, { LOGIN_RATE_LIMIT_MAX: '1', TRUST_PROXY: '127.0.0.1' })
  const attempt = async (username: string, client: string) => (await fetch(`${server.url}/auth/login`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-forwarded-for': client }, body: JSON.stringify({ username, password: 'a guess' })
  })).status
  const statuses: number[] = []
  for (let i = 0; i < 6; i++) statuses.push(await attempt(`user-${i}`, `2001:db8:7:1${i}::${i + 1}`))
  t.same(statuses, [401, 401, 401, 401, 401, 429])
  t.equal(await attempt('user-9', '2001:db8:8::1'), 401, 'another /56 is another client')
})

t.test('SQLITE_MMAP_MB maps the database file into the server; by default it is only read', { skip: process.platform !== 'linux' && 'reads /proc' }, async (t) => {
  // The file itself, not its -wal or -shm (the WAL index is always mapped).
  const mapsFile = (server: ServerProcess) => readFileSync(`/proc/${server.child.pid}/maps`, 'utf8')
    .split('\n').some((line) => line.endsWith(join(server.dataDir, 'people.db')))
  // Empty is unset, whatever the environment running the tests holds.
  const plain = await startServerProcess(t, { SQLITE_MMAP_MB: '' })
  t.equal((await fetch(`${plain.url}/people`, { headers: await adminHeaders(plain.url) })).status, 200)
  t.notOk(mapsFile(plain), 'not mapped by default')
  // Stopped cleanly, the file holds every page (no WAL left): a map covers it from the start.
  plain.child.kill('SIGTERM')
  t.equal(await plain.exited, 0)
  const mapped = await startServerProcess(t, { SQLITE_MMAP_MB: '16' }, { dataDir: plain.dataDir })
  t.equal((await fetch(`${mapped.url}/people`, { headers: await adminHeaders(mapped.url) })).status, 200)
  t.ok(mapsFile(mapped), 'mapped with SQLITE_MMAP_MB')
})

t.test('SIGTERM with an idle keep-alive connection: exits 0 promptly and closes the database', async (t) => {
  const server = await startServerProcess(t)
  const agent = new Agent({ keepAlive: true })
  t.teardown(() => agent.destroy())
  await new Promise<void>((resolve, reject) => {
    httpRequest(`${server.url}/health/live`, { agent }, (res) => { res.resume(); res.on('end', resolve) }).on('error', reject).end()
  })
  const started = Date.now()
  server.child.kill('SIGTERM')
  t.equal(await server.exited, 0, 'exit code 0')
  t.ok(Date.now() - started < 5000, `exited in ${Date.now() - started} ms, not held by the idle connection`)
  t.notOk(existsSync(join(server.dataDir, 'people.db-wal')), 'the WAL was checkpointed: the database was closed cleanly')
  t.match(server.output(), /shutting down/)
})

t.test('a bad configuration value stops the start with a message naming the variable', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const { MAIN } = await import('./server-process.js')
  for (const [name, value] of [['PORT', 'eighty'], ['LOG_LEVEL', 'loud'], ['DATABASE_URL', 'mysql://x']] as const) {
    const result = spawnSync(process.execPath, [MAIN], { env: { ...process.env, [name]: value }, encoding: 'utf8', timeout: 10_000 })
    t.equal(result.status, 2, `${name}=${value} exits 2`)
    t.match(result.stderr, new RegExp(`configuration error: ${name}`))
  }
})

t.test('a database server that cannot be reached, or a port in use, stops the start with one line naming the cause', async (t) => {
  const { spawnSync } = await import('node:child_process')
  const { MAIN } = await import('./server-process.js')
  const running = await startServerProcess(t)
  const cases = [
    [{ DATABASE_URL: 'postgres://people@127.0.0.1:1/people' }, /^could not start: .*ECONNREFUSED 127\.0\.0\.1:1\n$/],
    [{ PORT: new URL(running.url).port }, /^could not start: .*EADDRINUSE.*\n$/]
  ] as const
  for (const [env, message] of cases) {
    const result = spawnSync(process.execPath, [MAIN], { env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'sqlite::memory:', ...env }, encoding: 'utf8', timeout: 20_000 })
    t.equal(result.status, 1, `${JSON.stringify(env)} exits 1`)
    t.match(result.stderr, message)
    t.notMatch(result.stderr, /^\s+at /m, 'no stack trace')
  }
})

t.test('slow clients are cut off: headers that never finish do not hold a socket', async (t) => {
  const { connect } = await import('node:net')
  const server = await startServerProcess(t)
  const { port } = new URL(server.url)
  const socket = connect(Number(port), '127.0.0.1')
  await new Promise((resolve) => socket.on('connect', resolve))
  socket.write('GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ')
  const started = Date.now()
  let answer = ''
  socket.on('data', (chunk) => { answer += chunk.toString() })
  await new Promise((resolve) => socket.on('close', resolve))
  const took = Date.now() - started
  t.ok(took < 15_000, `the server closed the connection after ${took} ms`)
  t.match(answer, /^HTTP\/1\.1 408|^$/, 'with 408 Request Timeout, or simply closed')
})

t.test('connections past what the open-file limit allows are closed as they come: the server stays up and serves once they go', { skip: process.platform !== 'linux' && 'the limit is read from /proc' }, async (t) => {
  // 256 files: 118 connections once the pool (10) and the reserve (128) have theirs.
  // Without the limit, 400 connections took every file and the process shut down (EMFILE).
  const server = await startServerProcess(t, { MAX_CONNECTIONS_PER_ADDRESS: '0' }, { openFiles: 256 })
  const { hostname, port } = new URL(server.url)
  const sockets: Socket[] = []
  for (let i = 0; i < 400; i++) {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    sockets.push(socket)
    await new Promise((resolve) => { socket.once('connect', resolve); socket.once('close', resolve) })
  }
  // Under-pressure reads the memory use every second: the file it needed was what failed.
  await new Promise((resolve) => setTimeout(resolve, 1500))
  const open = sockets.filter((socket) => !socket.destroyed).length
  t.ok(open <= 118 && open > 100, `${open} of 400 kept`)
  t.equal(server.child.exitCode, null, 'the server runs')
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal((await fetch(`${server.url}/health/live`)).status, 200, 'and serves once they have gone')
  t.notMatch(server.output(), /EMFILE/)
})
