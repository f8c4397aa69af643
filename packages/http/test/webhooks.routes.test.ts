import t from 'tap'
import { WEBHOOK_LIMITS } from '@people-service/domain'
import type { inMemoryWebhookRepository } from '@people-service/domain/testing'
import { build, nextCursor } from './helper.js'

/*
 * The webhook routes of docs/API.md ("Events", webhooks) over in-memory
 * ports: registration, the secret shown once, changes, the delivery log and
 * its retry, the bounds. Delivery itself is tested through the real server
 * (packages/server/test/webhooks.test.ts).
 */

const HOOK = { url: 'https://hooks.example.org/people', types: ['person.updated', 'person.created'], description: 'CRM sync' }

t.test('POST /webhooks answers the secret once; GET never shows it', async (t) => {
  const { api } = await build(t)
  const created = await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })
  t.equal(created.statusCode, 201)
  t.equal(created.headers['cache-control'], 'no-store')
  const body = created.json<Record<string, unknown>>()
  t.match(body, { id: String, url: HOOK.url, types: ['person.created', 'person.updated'], description: 'CRM sync', disabled: false, createdAt: String })
  t.match(body.secret, /^whsec_[A-Za-z0-9+/]+=*$/)
  t.ok(Buffer.from(String(body.secret).slice(6), 'base64').length >= 24, 'at least 24 random bytes')
  const read = await api.inject(`/webhooks/${String(body.id)}`)
  t.same(Object.keys(read.json()).sort(), ['createdAt', 'description', 'disabled', 'id', 'types', 'url'])
  t.notMatch(read.body + (await api.inject('/webhooks')).body, String(body.secret).slice(6), 'the secret is not shown again')
  const other = await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })
  t.not(other.json().secret, body.secret, 'each webhook its own secret')
})

t.test('types are the contract\'s, the URL bounded, credentials in it refused', async (t) => {
  const { api } = await build(t)
  const refused = async (payload: object) => {
    const response = await api.inject({ method: 'POST', url: '/webhooks', payload })
    t.equal(response.statusCode, 400, JSON.stringify(payload).slice(0, 80))
    return response.json<{ message: string }>().message
  }
  t.match(await refused({ url: HOOK.url, types: ['person.renamed'] }), /types/)
  t.match(await refused({ url: `https://hooks.example.org/${'a'.repeat(WEBHOOK_LIMITS.urlLength)}` }), /url/)
  t.match(await refused({ url: 'https://user:pass@hooks.example.org/in' }), /credentials/)
  t.match(await refused({ url: 'ftp://hooks.example.org/in' }), /https/)
  t.match(await refused({ url: 'not a url' }), /URL/)
  t.match(await refused({ url: HOOK.url, secret: 'whsec_mine' }), /secret/)
  const every = await api.inject({ method: 'POST', url: '/webhooks', payload: { url: HOOK.url } })
  t.same(every.json().types, [], 'no types: every type')
})

t.test(`at most ${WEBHOOK_LIMITS.maxWebhooks} webhooks: one more is 409 TOO_MANY_WEBHOOKS; a deletion frees a place`, async (t) => {
  const { api } = await build(t)
  const ids: string[] = []
  for (let i = 0; i < WEBHOOK_LIMITS.maxWebhooks; i++) ids.push((await api.inject({ method: 'POST', url: '/webhooks', payload: { url: `${HOOK.url}/${i}` } })).json().id)
  const over = await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })
  t.equal(over.statusCode, 409)
  t.match(over.json(), { code: 'TOO_MANY_WEBHOOKS', message: /at most 50 webhooks/ })
  t.same((await api.inject({ method: 'DELETE', url: `/webhooks/${ids[0]!}` })).json(), { id: ids[0], deleted: true })
  t.equal((await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })).statusCode, 201)
  // Every one of them, a page at a time.
  const seen: string[] = []
  let url: string | undefined = '/webhooks?limit=20'
  while (url !== undefined) {
    const page = await api.inject(url)
    seen.push(...page.json<Array<{ id: string }>>().map((w) => w.id))
    const cursor = nextCursor(page.headers.link)
    url = cursor === undefined ? undefined : `/webhooks?limit=20&cursor=${cursor}`
  }
  t.equal(seen.length, WEBHOOK_LIMITS.maxWebhooks)
  t.same(seen, [...seen].sort(), 'oldest first')
})

t.test('PATCH changes what it names; a webhook that does not exist is 404', async (t) => {
  const { api } = await build(t)
  const { id } = (await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })).json<{ id: string }>()
  const changed = await api.inject({ method: 'PATCH', url: `/webhooks/${id}`, payload: { disabled: true, types: ['message.sent'], description: null } })
  t.equal(changed.statusCode, 200)
  t.match(changed.json(), { id, url: HOOK.url, types: ['message.sent'], description: null, disabled: true })
  t.equal((await api.inject({ method: 'PATCH', url: `/webhooks/${id}`, payload: { url: 'http://hooks.example.org/' } })).statusCode, 200, 'http: the in-memory ports allow every destination')
  t.equal((await api.inject({ method: 'PATCH', url: `/webhooks/${id}`, payload: { url: 'https://a:b@hooks.example.org/' } })).statusCode, 400)
  for (const missing of ['0192f6c4-0000-7000-8000-000000000009', 'not-an-id']) {
    t.match((await api.inject(`/webhooks/${missing}`)).json(), { statusCode: 404, code: 'WEBHOOK_NOT_FOUND' })
    t.equal((await api.inject({ method: 'PATCH', url: `/webhooks/${missing}`, payload: { disabled: false } })).statusCode, 404)
    t.equal((await api.inject({ method: 'DELETE', url: `/webhooks/${missing}` })).statusCode, 404)
    t.equal((await api.inject(`/webhooks/${missing}/deliveries`)).statusCode, 404)
  }
})

t.test('the delivery log: newest first, paged; a retry makes one pending and due', async (t) => {
  const { api, ports } = await build(t)
  const webhooks = ports.webhooks as ReturnType<typeof inMemoryWebhookRepository>
  const { id } = (await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })).json<{ id: string }>()
  const deliveries = Array.from({ length: 5 }, () => ports.ids.next())
  for (const delivery of deliveries) webhooks.record({ id: delivery, webhookId: id, eventId: ports.ids.next(), status: 'failed', attempts: 9, lastStatusCode: 500, nextAttemptAt: null })
  const first = await api.inject(`/webhooks/${id}/deliveries?limit=3`)
  t.same(first.json<Array<{ id: string }>>().map((d) => d.id), deliveries.slice(2).reverse())
  t.match(first.json()[0], { status: 'failed', attempts: 9, lastStatusCode: 500, nextAttemptAt: null, eventId: String })
  const second = await api.inject(`/webhooks/${id}/deliveries?limit=3&cursor=${nextCursor(first.headers.link)!}`)
  t.same(second.json<Array<{ id: string }>>().map((d) => d.id), deliveries.slice(0, 2).reverse())
  t.equal(second.headers.link, undefined, 'the last page')
  const retry = await api.inject({ method: 'POST', url: `/webhooks/${id}/deliveries/${deliveries[0]!}/retry` })
  t.equal(retry.statusCode, 202)
  t.same(retry.json(), { id: deliveries[0], status: 'pending' })
  t.match((await api.inject(`/webhooks/${id}/deliveries`)).json<Array<{ id: string }>>().find((d) => d.id === deliveries[0]), { status: 'pending', nextAttemptAt: String })
  const { id: other } = (await api.inject({ method: 'POST', url: '/webhooks', payload: HOOK })).json<{ id: string }>()
  t.match((await api.inject({ method: 'POST', url: `/webhooks/${other}/deliveries/${deliveries[1]!}/retry` })).json(), { statusCode: 404, code: 'DELIVERY_NOT_FOUND' }, 'another webhook\'s delivery')
  t.equal((await api.inject(`/webhooks/${other}/deliveries?cursor=${nextCursor(first.headers.link)!}`)).statusCode, 400, 'a cursor of another webhook\'s log')
  await api.inject({ method: 'DELETE', url: `/webhooks/${id}` })
  t.same(await webhooks.listDeliveries({ webhookId: id, limit: 10 }), [], 'the log goes with the webhook')
})

t.test('webhooks are for admins: an editor is 403, no credentials 401', async (t) => {
  const { app, as } = await build(t)
  const editor = await as('editor')
  t.equal((await app.inject({ method: 'POST', url: '/webhooks', headers: editor, payload: HOOK })).statusCode, 403)
  t.equal((await app.inject({ method: 'GET', url: '/webhooks' })).statusCode, 401)
})
