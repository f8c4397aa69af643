import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import type { Teardown } from '@people-service/infra/testing'
import { call, JWT_SECRET, login, start, tempDatabaseUrl } from './helper.js'
import { startServerProcess } from './server-process.js'

/*
 * Webhooks through the real server (docs/API.md, "Events", webhooks): a
 * receiver on loopback (WEBHOOK_ALLOW_PRIVATE=true) checks every request
 * with an independent implementation of Standard Webhooks; retries run on
 * short settings (WEBHOOK_RETRY_* and the lease in milliseconds).
 */

interface Received { id: string, timestamp: string, signature: string, body: string, path: string, at: number }

type Answer = (request: Received, response: ServerResponse) => void

const receiver = async (t: Teardown, initial: Answer = (_, response) => { response.writeHead(200).end('ok') }) => {
  const received: Received[] = []
  let answer = initial
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = {
        id: String(request.headers['webhook-id']),
        timestamp: String(request.headers['webhook-timestamp']),
        signature: String(request.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        path: request.url ?? '',
        at: Date.now()
      }
      received.push(entry)
      answer(entry, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answerWith: (next: Answer) => { answer = next } }
}

/** Verifies a received request as a consumer would, and returns the event. */
const verified = (secret: string, request: Received): Record<string, any> =>
  new Webhook(secret).verify(request.body, { 'webhook-id': request.id, 'webhook-timestamp': request.timestamp, 'webhook-signature': request.signature }) as Record<string, any>

const FAST = {
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT_MS: '1500',
  WEBHOOK_LEASE_MS: '2500',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_RETRY_MAX_MS: '300',
  WEBHOOK_POLL_MS: '50',
  RATE_LIMIT_MAX: '0'
}

const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 15_000): Promise<void> => {
  const end = Date.now() + ms
  while (!await check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const server = async (t: Teardown, env: Record<string, string> = {}) => {
  const started = await start(t, { DATABASE_URL: tempDatabaseUrl(t), ...FAST, ...env })
  const admin = await login(started.url)
  const api = (method: string, path: string, body?: unknown) => call(started.url, method, path, admin, body)
  return { ...started, admin, api }
}

t.test('a change reaches the receiver as a signed CloudEvent that standardwebhooks verifies; the secret is shown once', async (t) => {
  const hooks = await receiver(t)
  const { api, logs } = await server(t, { LOG_LEVEL: 'trace' })
  const created = await api('POST', '/webhooks', { url: `${hooks.url}/in`, types: ['person.created', 'person.updated'] })
  t.equal(created.status, 201)
  const { id, secret } = created.json() as { id: string, secret: string }
  t.notMatch((await api('GET', `/webhooks/${id}`)).text + (await api('GET', '/webhooks')).text, secret.slice(6), 'never shown again')
  const person = (await api('POST', '/person', { name: 'Ada Lovelace', age: 36 })).json() as { id: string }
  await api('PATCH', `/person/${person.id}`, { age: 37 })
  await api('POST', '/message', { personId: person.id, text: 'not a type it asked for' })
  await until('two events', () => hooks.received.length >= 2)
  const events = hooks.received.map((request) => verified(secret, request))
  t.match(events, [
    { specversion: '1.0', type: 'person.created', subject: `/person/${person.id}`, source: '/people-service', actorkind: 'account', datacontenttype: 'application/json', data: { id: person.id, name: 'Ada Lovelace', age: 36 } },
    { type: 'person.updated', data: { id: person.id, age: 37 } }
  ])
  t.same(hooks.received.map((r) => r.id), events.map((e) => e.id), 'webhook-id is the event id')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(hooks.received.length, 2, 'only the types it asked for')
  const log = (await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<Record<string, unknown>>
  t.match(log, [{ eventId: events[1]!.id, status: 'delivered', attempts: 1, lastStatusCode: 200, nextAttemptAt: null }, { eventId: events[0]!.id, status: 'delivered' }], 'newest first')
  t.ok(logs.length > 10, 'logged at trace level')
  t.notOk(logs.some((line) => line.includes(secret.slice(6))), 'the secret is in no log line')
})

t.test('retried with back-off until a 2xx; past the window failed; a manual retry sends it again', async (t) => {
  let failures = 2
  const hooks = await receiver(t, (_, response) => { response.writeHead(failures-- > 0 ? 500 : 200).end() })
  const { api } = await server(t, { WEBHOOK_RETRY_WINDOW_MS: '1500' })
  const { id, secret } = (await api('POST', '/webhooks', { url: `${hooks.url}/in`, types: ['person.created'] })).json() as { id: string, secret: string }
  await api('POST', '/person', { name: 'Grace Hopper' })
  await until('delivered', async () => ((await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<{ status: string }>)[0]?.status === 'delivered')
  const [delivery] = (await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<{ id: string, attempts: number }>
  t.equal(delivery!.attempts, 3)
  t.equal(new Set(hooks.received.map((r) => r.id)).size, 1, 'the same event each time')
  for (const request of hooks.received) verified(secret, request)
  t.ok(hooks.received[2]!.at - hooks.received[1]!.at >= 100, 'the second retry waited longer than the first one\'s jitter floor')

  hooks.answerWith((_, response) => { response.writeHead(503).end() })
  await api('POST', '/person', { name: 'Katherine Johnson' })
  await until('failed', async () => ((await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<{ status: string }>)[0]?.status === 'failed')
  const [failed] = (await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<{ id: string, status: string, lastStatusCode: number, nextAttemptAt: null }>
  t.match(failed, { status: 'failed', lastStatusCode: 503, nextAttemptAt: null })
  hooks.answerWith((_, response) => { response.writeHead(200).end() })
  const retry = await api('POST', `/webhooks/${id}/deliveries/${failed!.id}/retry`)
  t.same([retry.status, retry.json()], [202, { id: failed!.id, status: 'pending' }])
  await until('delivered after the retry', async () => ((await api('GET', `/webhooks/${id}/deliveries`)).json() as Array<{ status: string }>)[0]?.status === 'delivered')
})

t.test('410 Gone disables the webhook', async (t) => {
  const hooks = await receiver(t, (_, response) => { response.writeHead(410).end() })
  const { api } = await server(t)
  const { id } = (await api('POST', '/webhooks', { url: `${hooks.url}/in` })).json() as { id: string }
  await api('POST', '/person', { name: 'Ada' })
  await until('disabled', async () => (await api('GET', `/webhooks/${id}`)).json().disabled === true)
  const sent = hooks.received.length
  await api('POST', '/person', { name: 'Grace' })
  await new Promise((resolve) => setTimeout(resolve, 400))
  t.equal(hooks.received.length, sent, 'nothing more sent to it')
})

t.test('a redirect is not followed', async (t) => {
  const hooks = await receiver(t, (request, response) => { response.writeHead(request.path === '/in' ? 307 : 200, { location: '/elsewhere' }).end() })
  const { api } = await server(t)
  const { id } = (await api('POST', '/webhooks', { url: `${hooks.url}/in` })).json() as { id: string }
  await api('POST', '/person', { name: 'Ada' })
  await until('two attempts', () => hooks.received.length >= 2)
  t.same([...new Set(hooks.received.map((r) => r.path))], ['/in'])
  t.match((await api('GET', `/webhooks/${id}/deliveries`)).json(), [{ status: 'pending', lastStatusCode: 307 }])
})

t.test('without WEBHOOK_ALLOW_PRIVATE: http:// and names or addresses of loopback, private, metadata are refused with 400', async (t) => {
  const { api } = await server(t, { WEBHOOK_ALLOW_PRIVATE: 'false' })
  for (const url of ['http://hooks.example.org/in', 'https://localhost/in', 'https://127.0.0.1/in', 'https://10.0.0.7/in', 'https://169.254.169.254/latest', 'https://[::1]/in', 'https://[::ffff:10.0.0.1]/in']) {
    const refused = await api('POST', '/webhooks', { url })
    t.equal(refused.status, 400, url)
    t.match(refused.json(), { code: 'VALIDATION_FAILED', message: /^url / }, url)
  }
  t.equal((await api('GET', '/webhooks')).json().length, 0, 'none registered')
})

t.test('a slow endpoint does not slow the API', async (t) => {
  const hooks = await receiver(t, () => { /* never answers */ })
  const { api } = await server(t)
  await api('POST', '/webhooks', { url: `${hooks.url}/slow` })
  const person = (await api('POST', '/person', { name: 'Ada' })).json() as { id: string }
  for (let i = 0; i < 20; i++) await api('POST', '/person', { name: `Person ${i}` })
  await until('attempts hanging', () => hooks.received.length >= 1)
  const times: number[] = []
  for (let i = 0; i < 30; i++) {
    const began = performance.now()
    t.equal((await api('GET', `/person/${person.id}`)).status, 200)
    times.push(performance.now() - began)
  }
  times.sort((a, b) => a - b)
  t.ok(times[times.length - 1]! < 250, `GET /person answered in at most ${times[times.length - 1]!.toFixed(1)} ms while deliveries hang (median ${times[15]!.toFixed(1)} ms)`)
})

t.test('/metrics: attempts by outcome, the oldest undelivered delivery per webhook', async (t) => {
  const hooks = await receiver(t, (_, response) => { response.writeHead(500).end() })
  const { api } = await server(t)
  const { id } = (await api('POST', '/webhooks', { url: `${hooks.url}/in` })).json() as { id: string }
  await api('POST', '/person', { name: 'Ada' })
  await until('an attempt', () => hooks.received.length >= 1)
  await new Promise((resolve) => setTimeout(resolve, 200))
  const metrics = (await api('GET', '/metrics')).text
  t.match(metrics, /webhook_delivery_attempts_total\{outcome="retrying"\} [1-9]/)
  t.match(metrics, new RegExp(`webhook_oldest_pending_seconds\\{webhook="${id}"\\} \\d`))
})

t.test('at least once across a kill -9: a second instance on the same SQLite file delivers what the first was sending', async (t) => {
  const hooks = await receiver(t, () => { /* the first instance's attempts hang */ })
  const env = { ...FAST, JWT_SECRET, WEBHOOK_TIMEOUT_MS: '5000', WEBHOOK_LEASE_MS: '6000' }
  const first = await startServerProcess(t, env)
  const admin = await login(first.url)
  const { secret } = (await call(first.url, 'POST', '/webhooks', admin, { url: `${hooks.url}/in`, types: ['person.created'] })).json() as { secret: string }
  const people: string[] = []
  for (let i = 0; i < 5; i++) people.push(((await call(first.url, 'POST', '/person', admin, { name: `Person ${i}` })).json() as { id: string }).id)
  await until('attempts in flight', () => hooks.received.length >= 1)
  first.child.kill('SIGKILL')
  await first.exited
  const answered = new Set<string>()
  hooks.answerWith((request, response) => {
    answered.add(String(verified(secret, request).data.id))
    response.writeHead(200).end()
  })
  const second = await startServerProcess(t, env, { dataDir: first.dataDir })
  await until('every person delivered', () => people.every((id) => answered.has(id)), 30_000)
  t.same([...answered].sort(), [...people].sort(), 'every event, at least once, by the second instance')
  t.equal(second.child.exitCode, null)
})
