import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { aesGcmWebhookSecretBox, createUseCases, newWebhookSecret, systemClock, uuidv7Generator } from '@people-service/domain'
import { createInMemoryPorts } from '@people-service/domain/testing'
import { createRepositories, DISPATCHER_DEFAULTS, webhookDispatcher, webhookRelay, type DatabaseHandle } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { Webhook } from 'standardwebhooks'

/*
 * The webhook queue over a real database: the dispatcher's retries,
 * back-off, 410, giving up, two dispatchers sharing the queue, a claim
 * left by a killed instance; the relay from the event log. Run once per
 * database (webhook-delivery.test.ts, webhook-delivery-postgres.test.ts).
 */

interface Received { id: string, timestamp: string, signature: string, body: string, contentType: string | undefined, path: string, at: number }

/** A receiver on 127.0.0.1 that records each request and answers as `answer` says. */
export const receiver = async (t: Teardown, answer: (request: Received, response: ServerResponse) => void = (_, response) => { response.writeHead(204).end() }) => {
  const received: Received[] = []
  const server = createServer((request: IncomingMessage, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = {
        id: String(request.headers['webhook-id']),
        timestamp: String(request.headers['webhook-timestamp']),
        signature: String(request.headers['webhook-signature']),
        body: Buffer.concat(chunks).toString('utf8'),
        contentType: request.headers['content-type'],
        path: request.url ?? '',
        at: Date.now()
      }
      received.push(entry)
      answer(entry, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()) }))
  return { received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
}

const secrets = aesGcmWebhookSecretBox(Buffer.alloc(32, 7))
const ids = uuidv7Generator()

/** A webhook row and `count` deliveries of it, due now, as the relay writes them. */
const queued = async ({ db }: DatabaseHandle, url: string, count: number, windowMs = 60_000) => {
  const id = ids.next()
  const secret = newWebhookSecret()
  const now = new Date()
  await db.insertInto('webhook').values({ id, url, types: '', description: null, disabled: 0, sealed_secret: secrets.seal(id, secret), created_at: now.toISOString() }).execute()
  const deliveries = Array.from({ length: count }, (_, i) => ({
    id: ids.next(),
    webhook_id: id,
    event_id: `evt-${i}`,
    body: JSON.stringify({ id: `evt-${i}` }),
    status: 'pending' as const,
    attempts: 0,
    last_status_code: null,
    next_attempt_at: now.toISOString(),
    claim: null,
    give_up_at: new Date(now.getTime() + windowMs).toISOString(),
    created_at: now.toISOString()
  }))
  if (count > 0) await db.insertInto('webhook_delivery').values(deliveries).execute()
  return { id, secret, deliveries: deliveries.map((d) => d.id) }
}

const SETTINGS = { ...DISPATCHER_DEFAULTS, allowPrivate: true, timeoutMs: 1000, leaseMs: 3000, baseDelayMs: 200, maxDelayMs: 400, pollMs: 50 }
const quiet = { warn: () => {}, error: () => {} }

const dispatcherOver = (t: Teardown, database: DatabaseHandle, settings: typeof SETTINGS = SETTINGS) => {
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

/** The dispatcher and relay over one kind of database. */
export const queueSuite = (name: string, open: (t: Teardown) => Promise<DatabaseHandle>): void => {
  t.test(`${name}: retries with back-off until a 2xx; each attempt signed anew`, async (t) => {
    const database = await open(t)
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

  t.test(`${name}: 410 Gone fails the delivery and disables the webhook: nothing more is sent to it`, async (t) => {
    const database = await open(t)
    const hooks = await receiver(t, (_, response) => { response.writeHead(410).end() })
    const { id, deliveries } = await queued(database, `${hooks.url}/in`, 3)
    dispatcherOver(t, database, { ...SETTINGS, perWebhook: 1 })
    await until('the webhook disabled', async () => (await database.db.selectFrom('webhook').select('disabled').where('id', '=', id).executeTakeFirstOrThrow()).disabled === 1)
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(hooks.received.length, 1, 'one request, then none')
    t.match(await deliveryRow(database, deliveries[0]!), { status: 'failed', last_status_code: 410 })
    t.match(await deliveryRow(database, deliveries[1]!), { status: 'pending', attempts: 0 }, 'the others wait for the webhook to be enabled again')
  })

  t.test(`${name}: past the retry window a delivery is failed`, async (t) => {
    const database = await open(t)
    const hooks = await receiver(t, (_, response) => { response.writeHead(503).end() })
    const { deliveries: [delivery] } = await queued(database, `${hooks.url}/in`, 1, 700)
    dispatcherOver(t, database)
    await until('failed', async () => (await deliveryRow(database, delivery!)).status === 'failed')
    const row = await deliveryRow(database, delivery!)
    t.match(row, { status: 'failed', last_status_code: 503, next_attempt_at: null })
    t.ok(row.attempts >= 2, `retried before giving up (${row.attempts} attempts)`)
  })

  t.test(`${name}: two dispatchers on one database: every delivery made once`, async (t) => {
    const database = await open(t)
    const hooks = await receiver(t)
    const { deliveries } = await queued(database, `${hooks.url}/in`, 40)
    dispatcherOver(t, database)
    dispatcherOver(t, database)
    await until('all delivered', async () => hooks.received.length >= deliveries.length)
    await new Promise((resolve) => setTimeout(resolve, 300))
    t.equal(hooks.received.length, deliveries.length, 'no delivery twice')
    t.equal(new Set(hooks.received.map((r) => r.id)).size, deliveries.length)
  })

  t.test(`${name}: a slow endpoint holds its own slots only: another webhook is delivered meanwhile`, async (t) => {
    const database = await open(t)
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

  t.test(`${name}: a claim whose holder is gone runs out and another instance sends it`, async (t) => {
    const database = await open(t)
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

  t.test(`${name}: finished deliveries queued before the retention are pruned, a batch at a time; pending ones stay`, async (t) => {
    const database = await open(t)
    const { id: webhookId } = await queued(database, 'http://127.0.0.1:9/in', 0)
    const now = Date.now()
    const idAt = (ms: number, n: number) => `${ms.toString(16).padStart(12, '0').replace(/^(.{8})(.{4})$/, '$1-$2')}-7000-8000-${String(n).padStart(12, '0')}`
    const old = now - 40 * 86_400_000
    const row = (id: string, status: 'pending' | 'delivered' | 'failed') => ({
      id,
      webhook_id: webhookId,
      event_id: id,
      body: '{}',
      status,
      attempts: 1,
      last_status_code: null,
      next_attempt_at: null,
      claim: null,
      give_up_at: new Date(now).toISOString(),
      created_at: new Date(now).toISOString()
    })
    await database.db.insertInto('webhook_delivery').values([
      row(idAt(old, 1), 'delivered'), row(idAt(old, 2), 'failed'), row(idAt(old, 3), 'pending'), row(idAt(old, 4), 'delivered'), row(idAt(now, 5), 'delivered')
    ]).execute()
    const dispatcher = webhookDispatcher({ db: database.db, dialect: database.dialect, secrets, clock: systemClock, settings: SETTINGS, log: quiet })
    const before = new Date(now - 30 * 86_400_000)
    t.equal(await dispatcher.pruneBefore(before, 2), 2)
    t.equal(await dispatcher.pruneBefore(before, 2), 1)
    t.equal(await dispatcher.pruneBefore(before, 2), 0)
    const left = await database.db.selectFrom('webhook_delivery').select(['id', 'status']).orderBy('id').execute()
    t.same(left.map((r) => r.status), ['pending', 'delivered'], 'the old pending one and the recent one')
  })

  t.test(`${name}: the relay queues one delivery per event and matching enabled webhook, in the log's order, once`, async (t) => {
    const database = await open(t)
    const ports = createInMemoryPorts(createRepositories(database))
    const useCases = createUseCases(ports)
    const wanting = await queued(database, 'http://127.0.0.1:9/in', 0)
    await database.db.updateTable('webhook').set({ types: 'person.created' }).where('id', '=', wanting.id).execute()
    const every = await queued(database, 'http://127.0.0.1:9/every', 0)
    const disabled = await queued(database, 'http://127.0.0.1:9/off', 0)
    await database.db.updateTable('webhook').set({ disabled: 1 }).where('id', '=', disabled.id).execute()
    const actor = { kind: 'account', id: ids.next() } as const
    const ada = await useCases.createPerson(actor, { name: 'Ada' })
    await useCases.updatePerson(actor, ada.id, { age: 36 })
    const grace = await useCases.createPerson(actor, { name: 'Grace' })
    const relay = webhookRelay({ db: database.db, dialect: database.dialect, feed: ports.changeFeed, clock: systemClock, ids, settings: { batch: 2, pollMs: 50, retryWindowMs: 60_000 }, onQueued: () => {}, log: quiet })
    t.same(await relay.step(), { events: 2, deliveries: 3 })
    t.same(await relay.step(), { events: 1, deliveries: 2 })
    t.same(await relay.step(), { events: 0, deliveries: 0 }, 'read to the end')
    const rows = await database.db.selectFrom('webhook_delivery').select(['id', 'webhook_id', 'body', 'status']).orderBy('id').execute()
    const types = (webhook: string) => rows.filter((r) => r.webhook_id === webhook).map((r) => JSON.parse(r.body) as { type: string, data: { id: string } })
    t.same(types(wanting.id).map((e) => [e.type, e.data.id]), [['person.created', ada.id], ['person.created', grace.id]], 'its types only')
    t.same(types(every.id).map((e) => [e.type, e.data.id]), [['person.created', ada.id], ['person.updated', ada.id], ['person.created', grace.id]], 'every type, in order')
    t.same(types(disabled.id), [], 'a disabled webhook is sent nothing')
    t.match(types(every.id)[0], { specversion: '1.0', source: '/people-service', actorkind: 'account', actorid: actor.id, datacontenttype: 'application/json' })
    await database.db.updateTable('webhook_relay').set({ position: 0 }).execute()
    t.same(await relay.step(), { events: 2, deliveries: 3 }, 'a step repeated from an older position')
    t.equal((await database.db.selectFrom('webhook_delivery').select('id').execute()).length, rows.length, 'queues nothing twice')
  })
}
