import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { aesGcmWebhookSecretBox, newWebhookSecret, systemClock, uuidv7Generator } from '@people-service/domain'
import { DISPATCHER_DEFAULTS, isRefusedAddress, sendWebhook, webhookDestinations, webhookDispatcher, type DatabaseHandle } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

/*
 * Webhook delivery against real HTTP receivers on loopback: the signature
 * as an independent implementation (standardwebhooks) checks it, the
 * destinations refused, redirects, bounded reading, timeouts; then the
 * dispatcher over a real SQLite file: retries with back-off, 410, giving
 * up, and two dispatchers sharing one queue.
 */

interface Received { id: string, timestamp: string, signature: string, body: string, contentType: string | undefined, path: string, at: number }

/** A receiver on 127.0.0.1 that records each request and answers as `answer` says. */
const receiver = async (t: Teardown, answer: (request: Received, response: ServerResponse) => void = (_, response) => { response.writeHead(204).end() }) => {
  const received: Received[] = []
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = {
        id: String(request.headers['webhook-id']), timestamp: String(request.headers['webhook-timestamp']), signature: String(request.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'), contentType: request.headers['content-type'], path: request.url ?? '', at: Date.now()
      }
      received.push(entry)
      answer(entry, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const SEND = { timeoutMs: 2000, allowPrivate: true, maxResponseBytes: 64 * 1024 }
const EVENT = JSON.stringify({ specversion: '1.0', id: 'evt-1', source: '/people-service', type: 'person.created', subject: '/person/1', data: { id: '1' } })

t.test('a signed POST that the standardwebhooks package verifies', async (t) => {
  const hooks = await receiver(t)
  const secret = newWebhookSecret()
  const outcome = await sendWebhook({ url: `${hooks.url}/in`, eventId: 'evt-1', body: EVENT, secret }, SEND)
  t.same(outcome, { statusCode: 204 })
  const [request] = hooks.received
  t.equal(request?.contentType, 'application/cloudevents+json')
  t.equal(request?.id, 'evt-1')
  const verified = new Webhook(secret).verify(request!.body, { 'webhook-id': request!.id, 'webhook-timestamp': request!.timestamp, 'webhook-signature': request!.signature })
  t.same(verified, JSON.parse(EVENT), 'verified by an independent implementation')
  t.throws(() => new Webhook(newWebhookSecret()).verify(request!.body, { 'webhook-id': request!.id, 'webhook-timestamp': request!.timestamp, 'webhook-signature': request!.signature }), 'another secret does not verify it')
})

t.test('without WEBHOOK_ALLOW_PRIVATE: http://, loopback, private and metadata destinations are refused before anything is sent', async (t) => {
  const hooks = await receiver(t)
  const { port } = new URL(hooks.url)
  const strict = { ...SEND, allowPrivate: false }
  const secret = newWebhookSecret()
  for (const url of [
    `${hooks.url}/in`, `https://localhost:${port}/in`, `https://127.0.0.1:${port}/in`, `https://[::1]:${port}/in`,
    `https://[::ffff:127.0.0.1]:${port}/in`, 'https://10.1.2.3/in', 'https://169.254.169.254/latest/meta-data', 'https://100.64.0.1/', 'https://[fd00::1]/'
  ]) {
    const outcome = await sendWebhook({ url, eventId: 'evt-1', body: EVENT, secret }, strict)
    t.match(outcome, { statusCode: null, refused: true }, url)
  }
  t.equal(hooks.received.length, 0, 'the receiver saw nothing')
})

t.test('addresses: loopback, private, link-local, CGNAT, metadata, unique-local and their IPv4-mapped forms are refused; public ones are not', async (t) => {
  for (const address of ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fc00::1', 'fd12::1', 'fe80::1', '::ffff:10.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254']) {
    t.ok(isRefusedAddress(address), `${address} refused`)
  }
  for (const address of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8']) t.notOk(isRefusedAddress(address), `${address} allowed`)
  const strict = webhookDestinations({ allowPrivate: false })
  t.match(await strict.refusal(new URL('https://localhost/in')), /resolves to an address webhooks may not reach/, 'a name resolving to loopback, at registration')
  t.match(await strict.refusal(new URL('https://169.254.169.254/in')), /metadata/)
  t.match(await strict.refusal(new URL('http://hooks.example.org/in')), /https/)
  t.equal(await webhookDestinations({ allowPrivate: true }).refusal(new URL('http://127.0.0.1/in')), undefined, 'allowed for development')
})

t.test('a redirect is not followed; a long answer is read only so far; a silent endpoint times out', async (t) => {
  const hooks = await receiver(t, (request, response) => {
    if (request.path === '/moved') response.writeHead(302, { location: '/elsewhere' }).end()
    else if (request.path === '/long') {
      response.writeHead(200)
      const chunk = Buffer.alloc(64 * 1024, 'x')
      const write = () => { while (response.write(chunk)) { /* until the socket pushes back */ } }
      response.on('drain', write)
      write()
    } else if (request.path !== '/silent') response.writeHead(200).end()
  })
  const secret = newWebhookSecret()
  t.same(await sendWebhook({ url: `${hooks.url}/moved`, eventId: 'e', body: EVENT, secret }, SEND), { statusCode: 302 })
  t.same(hooks.received.map((r) => r.path), ['/moved'], '/elsewhere never asked for')
  const started = Date.now()
  t.same(await sendWebhook({ url: `${hooks.url}/long`, eventId: 'e', body: EVENT, secret }, SEND), { statusCode: 200 })
  t.ok(Date.now() - started < 1500, 'an endless answer is dropped at the bound')
  const silent = await sendWebhook({ url: `${hooks.url}/silent`, eventId: 'e', body: EVENT, secret }, { ...SEND, timeoutMs: 300 })
  t.match(silent, { statusCode: null, refused: false, error: /no answer within 300 ms/ })
})

const secrets = aesGcmWebhookSecretBox(Buffer.alloc(32, 7))
const ids = uuidv7Generator()

/** A webhook row and `count` deliveries of it, due now, as the relay writes them. */
const queued = async ({ db }: DatabaseHandle, url: string, count: number, windowMs = 60_000) => {
  const id = ids.next()
  const secret = newWebhookSecret()
  const now = new Date()
  await db.insertInto('webhook').values({ id, url, types: '', description: null, disabled: 0, sealed_secret: secrets.seal(id, secret), created_at: now.toISOString() }).execute()
  const deliveries = Array.from({ length: count }, (_, i) => ({
    id: ids.next(), webhook_id: id, event_id: `evt-${i}`, body: JSON.stringify({ id: `evt-${i}` }), status: 'pending' as const, attempts: 0,
    last_status_code: null, next_attempt_at: now.toISOString(), claim: null, give_up_at: new Date(now.getTime() + windowMs).toISOString(), created_at: now.toISOString()
  }))
  if (count > 0) await db.insertInto('webhook_delivery').values(deliveries).execute()
  return { id, secret, deliveries: deliveries.map((d) => d.id) }
}

const SETTINGS = { ...DISPATCHER_DEFAULTS, allowPrivate: true, timeoutMs: 1000, leaseMs: 3000, baseDelayMs: 200, maxDelayMs: 400, pollMs: 50 }
const quiet = { warn: () => {}, error: () => {} }

const dispatcherOver = (t: Teardown, database: DatabaseHandle, settings = SETTINGS) => {
  const dispatcher = webhookDispatcher({ db: database.db, dialect: database.dialect, secrets, clock: systemClock, settings, log: quiet })
  t.teardown(() => dispatcher.stop())
  dispatcher.start()
  return dispatcher
}

const until = async (what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> => {
  const end = Date.now() + ms
  while (!await check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

const deliveryRow = (database: DatabaseHandle, id: string) =>
  database.db.selectFrom('webhook_delivery').select(['status', 'attempts', 'last_status_code', 'next_attempt_at', 'claim']).where('id', '=', id).executeTakeFirstOrThrow()

t.test('retries with back-off until a 2xx; each attempt signed anew', async (t) => {
  const database = await sqliteFile(t)
  let answered = 0
  const hooks = await receiver(t, (_, response) => { response.writeHead(++answered < 3 ? 500 : 200).end() })
  const { deliveries: [delivery], secret } = await queued(database, `${hooks.url}/in`, 1)
  const dispatcher = dispatcherOver(t, database)
  await until('delivered', async () => (await deliveryRow(database, delivery!)).status === 'delivered')
  t.match(await deliveryRow(database, delivery!), { status: 'delivered', attempts: 3, last_status_code: 200, next_attempt_at: null, claim: null })
  const gaps = hooks.received.slice(1).map((r, i) => r.at - hooks.received[i]!.at)
  t.ok(gaps[0]! >= SETTINGS.baseDelayMs / 2, `first retry after at least half the base delay (${gaps[0]} ms)`)
  t.ok(gaps[1]! >= SETTINGS.baseDelayMs, `the second after at least half of twice it (${gaps[1]} ms)`)
  for (const request of hooks.received) new Webhook(secret).verify(request.body, { 'webhook-id': request.id, 'webhook-timestamp': request.timestamp, 'webhook-signature': request.signature })
  t.same(dispatcher.outcomes(), { delivered: 1, retrying: 2, failed: 0, lost_lease: 0 })
})

t.test('410 Gone fails the delivery and disables the webhook: nothing more is sent to it', async (t) => {
  const database = await sqliteFile(t)
  const hooks = await receiver(t, (_, response) => { response.writeHead(410).end() })
  const { id, deliveries } = await queued(database, `${hooks.url}/in`, 3)
  dispatcherOver(t, database, { ...SETTINGS, perWebhook: 1 })
  await until('the webhook disabled', async () => (await database.db.selectFrom('webhook').select('disabled').where('id', '=', id).executeTakeFirstOrThrow()).disabled === 1)
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(hooks.received.length, 1, 'one request, then none')
  t.match(await deliveryRow(database, deliveries[0]!), { status: 'failed', last_status_code: 410 })
  t.match(await deliveryRow(database, deliveries[1]!), { status: 'pending', attempts: 0 }, 'the others wait for the webhook to be enabled again')
})

t.test('past the retry window a delivery is failed', async (t) => {
  const database = await sqliteFile(t)
  const hooks = await receiver(t, (_, response) => { response.writeHead(503).end() })
  const { deliveries: [delivery] } = await queued(database, `${hooks.url}/in`, 1, 700)
  dispatcherOver(t, database)
  await until('failed', async () => (await deliveryRow(database, delivery!)).status === 'failed')
  const row = await deliveryRow(database, delivery!)
  t.match(row, { status: 'failed', last_status_code: 503, next_attempt_at: null })
  t.ok(row.attempts >= 2, `retried before giving up (${row.attempts} attempts)`)
})

t.test('two dispatchers on one SQLite file: every delivery made once', async (t) => {
  const database = await sqliteFile(t)
  const hooks = await receiver(t)
  const { deliveries } = await queued(database, `${hooks.url}/in`, 40)
  dispatcherOver(t, database)
  dispatcherOver(t, database)
  await until('all delivered', async () => hooks.received.length >= deliveries.length)
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.equal(hooks.received.length, deliveries.length, 'no delivery twice')
  t.equal(new Set(hooks.received.map((r) => r.id)).size, deliveries.length)
})

t.test('a slow endpoint holds its own slots only: another webhook is delivered meanwhile', async (t) => {
  const database = await sqliteFile(t)
  const slow = await receiver(t, () => { /* never answers */ })
  const fast = await receiver(t)
  await queued(database, `${slow.url}/in`, 20)
  const { deliveries } = await queued(database, `${fast.url}/in`, 5)
  const started = Date.now()
  dispatcherOver(t, database, { ...SETTINGS, timeoutMs: 2000, leaseMs: 5000, concurrency: 8, perWebhook: 4 })
  await until('the fast webhook served', async () => fast.received.length === deliveries.length, 1500)
  t.ok(Date.now() - started < 1500, `delivered in ${Date.now() - started} ms while the slow one hangs`)
  t.ok(slow.received.length <= 4, `at most its share of slots in flight to the slow one (${slow.received.length})`)
})

t.test('a claim whose holder is gone runs out and another instance sends it', async (t) => {
  const database = await sqliteFile(t)
  const hooks = await receiver(t)
  const { deliveries: [delivery] } = await queued(database, `${hooks.url}/in`, 1)
  // What a killed instance leaves: claimed, due again at its lease's end, attempted once.
  const leaseEnd = new Date(Date.now() + 500)
  await database.db.updateTable('webhook_delivery').set({ claim: 'a-killed-instance', attempts: 1, next_attempt_at: leaseEnd.toISOString() }).where('id', '=', delivery!).execute()
  dispatcherOver(t, database)
  await until('delivered', async () => (await deliveryRow(database, delivery!)).status === 'delivered')
  t.ok(hooks.received[0]!.at >= leaseEnd.getTime() - 5, 'not before the lease ran out')
  t.match(await deliveryRow(database, delivery!), { attempts: 2, claim: null })
})
