import t from 'tap'
import { Webhook } from 'standardwebhooks'
import { newWebhookSecret } from '@people-service/domain'
import { isRefusedAddress, sendWebhook, webhookDestinations } from '@people-service/infra'
import { sqliteFile } from './helper.js'
import { queueSuite, receiver } from './webhook-queue-suite.js'

/*
 * Webhook delivery against real HTTP receivers on loopback: the signature
 * as an independent implementation (standardwebhooks) checks it, the
 * destinations refused, redirects, bounded reading, timeouts; then the
 * dispatcher over a real SQLite file: retries with back-off, 410, giving
 * up, and two dispatchers sharing one queue.
 */

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
  t.match(await strict.refusal('https://localhost/in'), /resolves to an address webhooks may not reach/, 'a name resolving to loopback, at registration')
  t.match(await strict.refusal('https://169.254.169.254/in'), /metadata/)
  t.match(await strict.refusal('http://hooks.example.org/in'), /https/)
  t.equal(await webhookDestinations({ allowPrivate: true }).refusal('http://127.0.0.1/in'), undefined, 'allowed for development')
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

queueSuite('sqlite', sqliteFile)
