import { randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { verifyWebhook, WebhookVerificationError, type CloudEvent } from '@people-service/client'
import { Webhook } from 'standardwebhooks'
import t from 'tap'

/*
 * verifyWebhook against an independent implementation of Standard Webhooks
 * (the `standardwebhooks` package): what it signs verifies, and what it
 * refuses is refused.
 */

const secret = `whsec_${randomBytes(24).toString('base64')}`
const signer = new Webhook(secret)
const event: CloudEvent = {
  specversion: '1.0',
  id: '0193a1b2-0000-7000-8000-000000000001',
  source: '/people-service',
  type: 'person.updated',
  subject: '/person/0192f6c4',
  time: '2026-12-01T10:00:00.000Z',
  datacontenttype: 'application/json',
  actorkind: 'apikey',
  actorid: 'key-1',
  data: { id: '0192f6c4', name: 'Ada Lovelace — ünïcödé' }
}
const body = JSON.stringify(event)

const signed = (payload = body, at = new Date(), id = event.id) => ({
  'webhook-id': id,
  'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
  'webhook-signature': signer.sign(id, at, payload)
})

/** Both verifiers' verdicts: the event's id, or 'refused'. */
const verdicts = async (headers: Record<string, string>, payload: string) => {
  const ours = await verifyWebhook(secret, headers, payload).then((e) => e.id, (error: unknown) => {
    if (!(error instanceof WebhookVerificationError)) throw error
    return 'refused'
  })
  let theirs: string
  try {
    theirs = (signer.verify(payload, headers) as CloudEvent).id
  } catch {
    theirs = 'refused'
  }
  return { ours, theirs }
}

t.test('a request the reference signs verifies, with its headers as a record, as Headers, and its body as bytes', async (t) => {
  const headers = signed()
  t.same(await verifyWebhook(secret, headers, body), event)
  t.same(await verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(body)), event)
  const spelled = { 'Webhook-Id': headers['webhook-id'], 'Webhook-Timestamp': headers['webhook-timestamp'], 'Webhook-Signature': headers['webhook-signature'] }
  t.same(await verifyWebhook(secret, spelled, body), event, 'header names in any case')
  t.same(await verdicts(headers, body), { ours: event.id, theirs: event.id })
})

t.test('what the reference refuses is refused', async (t) => {
  const now = new Date()
  const cases: Array<[string, Record<string, string>, string]> = [
    ['a changed body', signed(), body.replace('Ada', 'Eve')],
    ['a body re-serialized with other spacing', signed(), JSON.stringify(event, null, 1)],
    ['another secret', { ...signed(), 'webhook-signature': new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(event.id, now, body) }, body],
    ['another message id', { ...signed(), 'webhook-id': 'another-id' }, body],
    ['a timestamp ten minutes old', signed(body, new Date(now.getTime() - 600_000)), body],
    ['a timestamp ten minutes ahead', signed(body, new Date(now.getTime() + 600_000)), body],
    ['a signature of another version', { ...signed(), 'webhook-signature': signed()['webhook-signature'].replace(/^v1,/, 'v2,') }, body],
    ['no signature', { 'webhook-id': event.id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': '' }, body]
  ]
  for (const [name, headers, payload] of cases) t.same(await verdicts(headers, payload), { ours: 'refused', theirs: 'refused' }, name)
  const missing = await verifyWebhook(secret, { 'webhook-id': event.id }, body).catch((error: unknown) => error)
  t.type(missing, WebhookVerificationError, 'missing headers')
})

t.test('one matching signature among several verifies (a secret being rotated)', async (t) => {
  const headers = signed()
  const other = new Webhook(`whsec_${randomBytes(24).toString('base64')}`).sign(event.id, new Date(), body)
  const rotated = { ...headers, 'webhook-signature': `${other} ${headers['webhook-signature']}` }
  t.same(await verdicts(rotated, body), { ours: event.id, theirs: event.id })
})

t.test('a receiver on node:http verifies the raw body of a delivery', async (t) => {
  const received: Array<string> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      verifyWebhook(secret, request.headers, Buffer.concat(chunks)).then((verified) => {
        received.push(verified.type)
        response.writeHead(204).end()
      }, (error: unknown) => {
        received.push(error instanceof WebhookVerificationError ? 'refused' : 'failed')
        response.writeHead(400).end()
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  const post = (headers: Record<string, string>, payload: string) => fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/cloudevents+json' }, body: payload })
  t.equal((await post(signed(), body)).status, 204)
  t.equal((await post(signed(), body.replace('updated', 'deleted'))).status, 400)
  t.same(received, ['person.updated', 'refused'])
})
