import t from 'tap'
import { ADA, build, type Injector } from './helper.js'

type App = Injector

const post = (api: App, url: string, payload: unknown, method: 'POST' | 'PUT' | 'PATCH' = 'POST') =>
  api.inject({ method, url, payload: payload as object })

/** Everything the service holds, to prove a rejected request changed nothing. */
const snapshot = async (api: App) => {
  const people = (await api.inject('/people?limit=1000')).json() as Array<{ id: string }>
  return Promise.all(people.map(async ({ id }) => (await api.inject(`/person/${id}`)).json()))
}

t.test('POST /person creates: 201, Location, the person with defaults', async (t) => {
  const { api } = await build(t)
  const res = await post(api, '/person', { name: 'Grace Hopper' })
  t.equal(res.statusCode, 201)
  const body = res.json()
  t.equal(res.headers.location, `/person/${body.id}`)
  t.match(body, { name: 'Grace Hopper', age: null, email: null, address: null })
  t.equal(body.createdAt, body.updatedAt)
  t.same((await api.inject(res.headers.location as string)).json(), body)
})

t.test('every field rule is refused with 400 naming the field, and nothing is stored', async (t) => {
  const { api } = await build(t)
  const ada = (await post(api, '/person', ADA)).json()
  const before = await snapshot(api)
  const cases: Array<[string, unknown, RegExp]> = [
    ['no name', { age: 3 }, /name/],
    ['empty name', { name: '' }, /name/],
    ['name of 201 characters', { name: 'x'.repeat(201) }, /name/],
    ['name not a string', { name: 42 }, /name/],
    ['name holding U+0000', { name: 'A\u0000B' }, /name/],
    ['negative age', { name: 'A', age: -1 }, /age/],
    ['age over 150', { name: 'A', age: 151 }, /age/],
    ['fractional age', { name: 'A', age: 1.5 }, /age/],
    ['age as a string is not coerced', { name: 'A', age: '36' }, /age/],
    ['email without @', { name: 'A', email: 'ada.example.org' }, /email/],
    ['email of 255 characters', { name: 'A', email: `${'a'.repeat(243)}@example.org` }, /email/],
    ['email not a string', { name: 'A', email: 7 }, /email/],
    ['address not an object', { name: 'A', address: 'London' }, /address/],
    ['address with an unknown field', { name: 'A', address: { planet: 'Earth' } }, /planet/],
    ['address field too long', { name: 'A', address: { city: 'c'.repeat(201) } }, /city/],
    ['address field holding U+0000', { name: 'A', address: { street: 'x\u0000' } }, /street/],
    ['unknown field', { name: 'A', nickname: 'Countess' }, /nickname/],
    ['createdAt is never accepted', { name: 'A', createdAt: '2020-01-01T00:00:00.000Z' }, /createdAt/],
    ['updatedAt is never accepted', { name: 'A', updatedAt: '2020-01-01T00:00:00.000Z' }, /updatedAt/],
    ['a body that is not an object', [ADA], /body/],
    ['update via POST /person with a bad age', { id: ada.id, age: 500 }, /age/]
  ]
  for (const [name, body, field] of cases) {
    const res = await post(api, '/person', body)
    t.equal(res.statusCode, 400, name)
    t.match(res.json(), { statusCode: 400, error: 'Bad Request', message: field }, name)
  }
  for (const [name, body, field] of [
    ['id in a PUT body', { id: ada.id, name: 'B' }, /id/],
    ['name cannot be cleared', { name: null }, /name/],
    ['age too high', { age: 151 }, /age/],
    ['name holding U+0000', { name: 'B\u0000' }, /name/]
  ] as const) {
    const res = await post(api, `/person/${ada.id}`, body, 'PUT')
    t.equal(res.statusCode, 400, name)
    t.match(res.json().message, field, name)
  }
  t.same(await snapshot(api), before, 'no rejected request changed anything')
})

t.test('text with a lone surrogate is refused with 400: it could not be stored as sent', async (t) => {
  // UTF-8 cannot encode half a character: a database would keep something
  // else than the 201 confirmed (over SQLite, U+FFFD in its place).
  const { api } = await build(t)
  const ada = (await post(api, '/person', ADA)).json()
  const before = await snapshot(api)
  for (const [method, url, body, field] of [
    ['POST', '/person', { name: 'Ada\ud83d' }, 'name'],
    ['PATCH', `/person/${ada.id}`, { address: { city: 'Lon\udc00don' } }, 'address.city'],
    ['POST', '/message', { personId: ada.id, text: '\ud83d' }, 'text']
  ] as const) {
    const res = await post(api, url, body, method)
    t.equal(res.statusCode, 400, `${method} ${url} ${field}`)
    t.match(res.json(), { code: 'VALIDATION_FAILED', message: new RegExp(`^${field} `) })
  }
  t.same(await snapshot(api), before, 'nothing was stored')
  t.same((await api.inject(`/person/${ada.id}/messages`)).json(), [])
  const paired = await post(api, '/person', { name: 'Ada 😀' })
  t.equal(paired.statusCode, 201, 'a pair of surrogates is one character')
  t.same((await api.inject(`/person/${paired.json().id}`)).json().name, 'Ada 😀')
})

t.test('updates: fields left out keep their value, null clears, address merges', async (t) => {
  const { api } = await build(t)
  const ada = (await post(api, '/person', ADA)).json()
  const put = await post(api, `/person/${ada.id}`, { age: 37 }, 'PUT')
  t.equal(put.statusCode, 200)
  t.match(put.json(), { ...ADA, age: 37, createdAt: ada.createdAt })
  const patch = await post(api, `/person/${ada.id}`, { email: null, address: { city: 'Paris' } }, 'PATCH')
  t.match(patch.json(), { email: null, address: { street: ADA.address.street, city: 'Paris', country: 'UK' } })
  const viaPost = await post(api, `/person/${ada.id}`, { address: null })
  t.equal(viaPost.statusCode, 200)
  t.equal(viaPost.json().address, null)
  const viaBodyId = await post(api, '/person', { id: ada.id, name: 'Augusta Ada King' })
  t.equal(viaBodyId.statusCode, 200, 'POST /person with an id updates')
  t.match(viaBodyId.json(), { id: ada.id, name: 'Augusta Ada King', age: 37, email: null, address: null })
  t.same((await api.inject(`/person/${ada.id}`)).json(), viaBodyId.json())
  t.equal((await post(api, '/person', { id: '01a1fe78-fcb4-7000-a350-7afc4e244c67', name: 'X' })).statusCode, 404)
  t.equal((await post(api, '/person/01a1fe78-fcb4-7000-a350-7afc4e244c67', { name: 'X' }, 'PUT')).statusCode, 404)
})

t.test('DELETE /person/<id> removes the person with friendships and messages', async (t) => {
  const { api } = await build(t)
  const ada = (await post(api, '/person', ADA)).json()
  const bob = (await post(api, '/person', { name: 'Bob' })).json()
  await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${bob.id}` })
  const message = (await post(api, '/message', { personId: ada.id, text: 'hi' })).json()
  const res = await api.inject({ method: 'DELETE', url: `/person/${ada.id}` })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { id: ada.id, deleted: true })
  t.equal((await api.inject(`/person/${ada.id}`)).statusCode, 404)
  t.same((await api.inject(`/person/${bob.id}/friends`)).json(), [])
  t.equal((await api.inject(`/message/${message.id}`)).statusCode, 404)
  t.equal((await api.inject({ method: 'DELETE', url: `/person/${ada.id}` })).statusCode, 404)
})

t.test('friendships: mutual, idempotent, limited, never with oneself', async (t) => {
  const { api } = await build(t)
  const ada = (await post(api, '/person', ADA)).json()
  const friends = []
  for (let i = 0; i < 12; i++) friends.push((await post(api, '/person', { name: `Friend ${i}` })).json())
  for (const friend of friends) {
    const res = await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${friend.id}` })
    t.equal(res.statusCode, 200)
    t.same(res.json(), { personId: ada.id, friendId: friend.id })
  }
  t.equal((await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${friends[0].id}` })).statusCode, 200, 'again is fine')
  const listed = (await api.inject(`/person/${ada.id}/friends`)).json()
  t.equal(listed.length, 10, 'default limit is 10')
  t.same(listed[0], { id: friends[0].id, name: 'Friend 0' })
  t.equal((await api.inject(`/person/${ada.id}/friends?limit=100`)).json().length, 12)
  t.same((await api.inject(`/person/${friends[3].id}/friends`)).json(), [{ id: ada.id, name: ADA.name }], 'mutual')
  for (const limit of ['0', '101', 'x']) t.equal((await api.inject(`/person/${ada.id}/friends?limit=${limit}`)).statusCode, 400, `limit=${limit}`)
  const self = await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/${ada.id}` })
  t.equal(self.statusCode, 400)
  t.equal(self.json().code, 'SELF_FRIENDSHIP')
  t.equal((await api.inject({ method: 'PUT', url: `/person/${ada.id}/friends/01a1fe78-fcb4-7000-a350-7afc4e244c67` })).statusCode, 404)
  const removed = await api.inject({ method: 'DELETE', url: `/person/${friends[3].id}/friends/${ada.id}` })
  t.same(removed.json(), { personId: friends[3].id, friendId: ada.id, deleted: true })
  t.equal((await api.inject({ method: 'DELETE', url: `/person/${friends[3].id}/friends/${ada.id}` })).statusCode, 200, 'again is fine')
  t.same((await api.inject(`/person/${friends[3].id}/friends`)).json(), [])
  t.equal((await api.inject(`/person/${ada.id}/friends?limit=100`)).json().length, 11)
})
