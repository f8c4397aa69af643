import { PeopleServiceClient, type Fetch } from '@people-service/client'
import t from 'tap'
import { collect } from './helper.js'

/*
 * The webhook methods send what docs/API.md ("Events", webhooks) asks for:
 * method, path, body, and paging through Link. Answered here by a stand-in
 * fetch that records each request.
 */

interface Request { method: string, path: string, body: unknown }

const standIn = () => {
  const requests: Request[] = []
  const fetch: Fetch = async (url, init) => {
    const { pathname, search } = new URL(url)
    requests.push({ method: init.method, path: pathname + search, body: init.body === undefined ? undefined : JSON.parse(init.body) })
    const page = new URL(url).searchParams.get('cursor')
    const [status, body, link] = init.method === 'POST' && pathname === '/webhooks'
      ? [201, { id: 'w1', url: 'https://hooks.example.org/in', types: ['person.created'], description: null, disabled: false, secret: 'whsec_c2VjcmV0', createdAt: '2026-12-01T10:00:00.000Z' }, undefined]
      : pathname.endsWith('/retry')
        ? [202, { id: 'd1', status: 'pending' }, undefined]
        : pathname.endsWith('/deliveries')
          ? [200, [{ id: page === null ? 'd2' : 'd1', eventId: 'e', status: 'failed', attempts: 3, lastStatusCode: 500, nextAttemptAt: null }], page === null ? `<${pathname}?limit=1&cursor=next>; rel="next"` : undefined]
          : [200, { id: 'w1' }, undefined]
    return { status, headers: new Headers(link === undefined ? {} : { link }), text: async () => JSON.stringify(body) }
  }
  return { requests, client: new PeopleServiceClient({ baseUrl: 'http://people.test', apiKey: 'admin-key', fetch }) }
}

t.test('webhooks: create, read, change, delete, deliveries paged, a retry', async (t) => {
  const { requests, client } = standIn()
  const created = await client.webhooks.create({ url: 'https://hooks.example.org/in', types: ['person.created'] })
  t.equal(created.secret, 'whsec_c2VjcmV0')
  t.equal(created.lastResponse.statusCode, 201)
  await client.webhooks.get('w1')
  await client.webhooks.update('w1', { disabled: true })
  const deliveries = await collect(client.webhooks.deliveries('w1', { limit: 1 }))
  t.same(deliveries.map((d) => d.id), ['d2', 'd1'])
  t.same(await client.webhooks.retryDelivery('w1', 'd1'), { id: 'd1', status: 'pending' })
  await client.webhooks.delete('w1')
  t.same(requests, [
    { method: 'POST', path: '/webhooks', body: { url: 'https://hooks.example.org/in', types: ['person.created'] } },
    { method: 'GET', path: '/webhooks/w1', body: undefined },
    { method: 'PATCH', path: '/webhooks/w1', body: { disabled: true } },
    { method: 'GET', path: '/webhooks/w1/deliveries?limit=1', body: undefined },
    { method: 'GET', path: '/webhooks/w1/deliveries?limit=1&cursor=next', body: undefined },
    { method: 'POST', path: '/webhooks/w1/deliveries/d1/retry', body: undefined },
    { method: 'DELETE', path: '/webhooks/w1', body: undefined }
  ])
})
