import t from 'tap'
import { ADA, build, nextLink, type Injector } from './helper.js'

type App = Injector

const create = async (api: App, body: object) => {
  const res = await api.inject({ method: 'POST', url: '/person', payload: body })
  if (res.statusCode !== 201) throw new Error(`create failed: ${res.statusCode} ${res.body}`)
  return res.json() as { id: string, name: string }
}

t.test('GET /people on an empty service is an empty list', async (t) => {
  const { api } = await build(t)
  const res = await api.inject('/people')
  t.equal(res.statusCode, 200)
  t.same(res.json(), [])
  t.equal(res.headers.link, undefined)
})

t.test('GET /people pages by id, with Link rel="next" while more exist', async (t) => {
  const { api } = await build(t)
  const made = []
  for (let i = 0; i < 5; i++) made.push(await create(api, { name: `Person ${i}` }))
  const seen: Array<{ id: string, name: string }> = []
  let url: string | undefined = '/people?limit=2'
  let pages = 0
  while (url) {
    const res = await api.inject(url)
    t.equal(res.statusCode, 200)
    seen.push(...res.json())
    url = nextLink(res.headers.link)
    pages++
  }
  t.equal(pages, 3)
  t.same(seen, made.map(({ id, name }) => ({ id, name })), 'every person once, in id order, only id and name')
})

t.test('GET /people?name= filters case-insensitively and keeps the filter in the next link', async (t) => {
  const { api } = await build(t)
  for (const name of ['Ada Lovelace', 'Grace Hopper', 'Alan Turing', 'ADA King']) await create(api, { name })
  const res = await api.inject('/people?name=ada&limit=1')
  t.same(res.json().map((p: { name: string }) => p.name), ['Ada Lovelace'])
  const next = nextLink(res.headers.link)
  t.match(next, /name=ada/)
  t.same((await api.inject(next!)).json().map((p: { name: string }) => p.name), ['ADA King'])
  t.same((await api.inject('/people?name=%00')).json(), [], 'no name holds U+0000')
  // Nor a lone surrogate (a GraphQL variable can carry one): PostgreSQL's
  // driver had sent it as U+FFFD, and matched names holding that.
  await create(api, { name: 'Ada \uFFFD' })
  const lone = await api.inject({ method: 'POST', url: '/graphql', payload: { query: 'query ($n: String) { people(name: $n) { name } }', variables: { n: '\ud800' } } })
  t.same(lone.json().data, { people: [] }, 'no name holds a lone surrogate')
  for (const name of ['', 'a'.repeat(201)]) {
    const refused = await api.inject(`/people?name=${name}`)
    t.equal(refused.statusCode, 400, `a filter of ${name.length} characters: 1–200, as GraphQL's people(name:)`)
    t.match(refused.json(), { code: 'VALIDATION_FAILED', message: /name/ })
  }
})

t.test('the next link keeps a name filter with spaces, & and non-ASCII letters as the client sent it', async (t) => {
  const { api } = await build(t)
  for (const name of ['Zoë & Ada Été', 'Bob', 'zoë & ada été II']) await create(api, { name })
  const res = await api.inject(`/people?limit=1&name=${encodeURIComponent('ZOË & ADA')}`)
  t.same(res.json().map((p: { name: string }) => p.name), ['Zoë & Ada Été'])
  const next = nextLink(res.headers.link)
  t.equal(new URLSearchParams(next?.split('?')[1]).get('name'), 'ZOË & ADA', 'the filter, decoded, is the one asked for')
  t.match(next, /^\/people\?/, 'the same path')
  t.same((await api.inject(next!)).json().map((p: { name: string }) => p.name), ['zoë & ada été II'], 'and the next page is filtered by it')
})

t.test('a limit is written in decimal digits on every list: hex, exponents, spaces and fractions are refused, not read as numbers', async (t) => {
  const { api } = await build(t)
  const ada = await create(api, ADA)
  const lists = ['/people', `/person/${ada.id}/friends`, `/person/${ada.id}/messages`, '/users', '/api-keys']
  for (const list of lists) {
    for (const limit of ['0x10', '1e1', '%2010', '10.0', '+10', '0b1']) {
      const res = await api.inject(`${list}?limit=${limit}`)
      t.same([res.statusCode, res.json().message], [400, 'querystring.limit must be integer'], `${list}?limit=${limit}`)
    }
    t.equal((await api.inject(`${list}?limit=010`)).statusCode, 200, `${list}?limit=010 is ten`)
  }
})

t.test('GET /people rejects bad limits, cursors and unknown parameters with 400', async (t) => {
  const { api } = await build(t)
  for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'limit=1.5', 'cursor=garbage', 'cursor=' + Buffer.from('{"a":1}').toString('base64url'), 'cursor=' + Buffer.from('["\\u0000"]').toString('base64url'), 'colour=red']) {
    const res = await api.inject(`/people?${query}`)
    t.equal(res.statusCode, 400, query)
    t.equal(res.json().statusCode, 400)
    t.type(res.json().message, 'string')
  }
  t.equal((await api.inject('/people?limit=1000')).statusCode, 200)
})

t.test('GET /person/<id> returns the whole person', async (t) => {
  const { api } = await build(t)
  const ada = await create(api, ADA)
  const res = await api.inject(`/person/${ada.id}`)
  t.equal(res.statusCode, 200)
  const body = res.json()
  t.same(Object.keys(body).sort(), ['address', 'age', 'createdAt', 'email', 'id', 'name', 'updatedAt'])
  t.match(body, { id: ada.id, ...ADA })
  t.match(body.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
})

t.test('a path segment too long to be an id: 401 without credentials, as on every protected route; 404 with them, quoting the id\'s start only', async (t) => {
  const { app, api } = await build(t)
  const id = 'x'.repeat(5000)
  for (const url of [`/person/${id}`, `/person/${id}/friends`, `/message/${id}`, `/users/${id}`, `/api-keys/${id}/usage`, `/nowhere/${id}`]) {
    const anonymous = await app.inject(url)
    t.equal(anonymous.statusCode, 401, `${url.slice(0, 20)}…: 401, whether the route exists or not`)
    t.equal(anonymous.headers['x-content-type-options'], 'nosniff')
  }
  const found = await api.inject(`/person/${id}`)
  t.equal(found.statusCode, 404)
  t.equal(found.json().message, `no person with id "${'x'.repeat(64)}"… (5000 characters)`)
})

t.test('an id that names nothing, or is not well formed, is 404 JSON', async (t) => {
  const { api } = await build(t)
  for (const id of ['01a1fe78-fcb4-7000-a350-7afc4e244c67', 'not-an-id', 'x'.repeat(300), '%00']) {
    for (const [method, url] of [['GET', `/person/${id}`], ['DELETE', `/person/${id}`], ['GET', `/person/${id}/friends`], ['GET', `/person/${id}/messages`], ['GET', `/message/${id}`]] as const) {
      const res = await api.inject({ method, url })
      t.equal(res.statusCode, 404, `${method} ${url.slice(0, 60)}`)
      t.equal(res.json().statusCode, 404)
    }
  }
})
