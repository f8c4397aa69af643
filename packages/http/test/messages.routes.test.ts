import t from 'tap'
import { ADA, build, forgedCursor, nextCursor, nextLink } from './helper.js'

t.test('POST /message sends: 201, Location, the message; GET /message/<id> reads it', async (t) => {
  const { api } = await build(t)
  const ada = (await api.inject({ method: 'POST', url: '/person', payload: ADA })).json()
  const res = await api.inject({ method: 'POST', url: '/message', payload: { personId: ada.id, text: 'Hello, Ada 👋' } })
  t.equal(res.statusCode, 201)
  const message = res.json()
  t.same(Object.keys(message).sort(), ['id', 'personId', 'senderId', 'sentAt', 'text'])
  t.match(message, { personId: ada.id, text: 'Hello, Ada 👋' })
  t.equal(res.headers.location, `/message/${message.id}`)
  t.same((await api.inject(`/message/${message.id}`)).json(), message)
})

t.test('POST /message refuses bad bodies with 400 and unknown people with 404', async (t) => {
  const { api } = await build(t)
  const ada = (await api.inject({ method: 'POST', url: '/person', payload: ADA })).json()
  for (const [name, body] of [
    ['empty text', { personId: ada.id, text: '' }],
    ['text over 10,000 characters', { personId: ada.id, text: 'x'.repeat(10_001) }],
    ['no text', { personId: ada.id }],
    ['no person', { text: 'hi' }],
    ['text not a string', { personId: ada.id, text: 5 }],
    ['text holding U+0000', { personId: ada.id, text: 'hi\u0000' }],
    ['senderId is set by the service', { personId: ada.id, text: 'hi', senderId: 'someone-else' }],
    ['id is set by the service', { personId: ada.id, text: 'hi', id: 'x' }]
  ] as const) {
    const res = await api.inject({ method: 'POST', url: '/message', payload: body })
    t.equal(res.statusCode, 400, name)
  }
  const unknown = await api.inject({ method: 'POST', url: '/message', payload: { personId: '01a1fe78-fcb4-7000-a350-7afc4e244c67', text: 'hi' } })
  t.equal(unknown.statusCode, 404)
  t.equal(unknown.json().code, 'PERSON_NOT_FOUND')
  t.same((await api.inject(`/person/${ada.id}/messages`)).json(), [], 'nothing was stored')
  t.equal((await api.inject({ method: 'POST', url: '/message', payload: { personId: ada.id, text: 'x'.repeat(10_000) } })).statusCode, 201)
})

t.test('GET /person/<id>/messages is newest first and pages with Link', async (t) => {
  const { api } = await build(t)
  const ada = (await api.inject({ method: 'POST', url: '/person', payload: ADA })).json()
  for (let i = 0; i < 5; i++) {
    await api.inject({ method: 'POST', url: '/message', payload: { personId: ada.id, text: `m${i}` } })
  }
  const first = await api.inject(`/person/${ada.id}/messages?limit=3`)
  t.same(first.json().map((m: { text: string }) => m.text), ['m4', 'm3', 'm2'])
  const next = nextLink(first.headers.link)
  t.ok(next)
  const second = await api.inject(next!)
  t.same(second.json().map((m: { text: string }) => m.text), ['m1', 'm0'])
  t.equal(second.headers.link, undefined)
  t.equal((await api.inject(`/person/${ada.id}/messages`)).json().length, 5, 'default limit 20')
  for (const q of ['limit=0', 'limit=101', 'cursor=nope']) t.equal((await api.inject(`/person/${ada.id}/messages?${q}`)).statusCode, 400, q)
  // Instants Date parses but no cursor of the service holds: PostgreSQL
  // had failed on the extended years (500), SQLite compared them as text.
  const issued = nextCursor(first.headers.link)!
  const [list, , id] = JSON.parse(Buffer.from(issued, 'base64url').toString()) as [string, string, string]
  for (const instant of ['+010000-01-01T00:00:00.000Z', '-005000-01-01T00:00:00.000Z', '0000-01-01T00:00:00.000Z', '2026-11-25', '2026-11-25T10:00:00Z', 'Wed, 25 Nov 2026 10:00:00 GMT']) {
    const cursor = forgedCursor([list, instant, id])
    const refused = await api.inject(`/person/${ada.id}/messages?cursor=${cursor}`)
    t.same([refused.statusCode, refused.json().code], [400, 'INVALID_CURSOR'], instant)
  }
  // Another person's inbox, or another list, is no place for this cursor:
  // read there, it had answered an empty last page.
  const bob = (await api.inject({ method: 'POST', url: '/person', payload: { name: 'Bob' } })).json()
  await api.inject({ method: 'POST', url: '/message', payload: { personId: bob.id, text: 'for Bob' } })
  for (const url of [`/person/${bob.id}/messages?cursor=${issued}`, `/api-keys?cursor=${issued}`, `/users?cursor=${issued}`, `/people?cursor=${issued}`]) {
    const refused = await api.inject(url)
    t.same([refused.statusCode, refused.json().code], [400, 'INVALID_CURSOR'], url.replace(issued, '<Ada\'s cursor>'))
  }
})
