import t from 'tap'
import { ADA, build } from './helper.js'

t.test('If-Match: * on a person that does not exist is 412, on every write; on one that does, the write goes through', async (t) => {
  const { app, admin } = await build(t)
  const missing = '0192f6c4-0000-7000-8000-000000000000'
  for (const [method, payload] of [['DELETE', undefined], ['PATCH', { age: 1 }], ['PUT', { age: 1 }], ['POST', { age: 1 }]] as const) {
    const response = await app.inject({ method, url: `/person/${missing}`, headers: { ...admin, 'if-match': '*' }, ...(payload ? { payload } : {}) })
    t.equal(response.statusCode, 412, method)
    t.match(response.json(), { code: 'PRECONDITION_FAILED', message: /If-Match: \*/ }, method)
  }
  t.equal((await app.inject({ method: 'POST', url: '/person', headers: { ...admin, 'if-match': '*' }, payload: { id: missing, age: 1 } })).statusCode, 412, 'POST /person with an id')
  t.equal((await app.inject({ method: 'DELETE', url: `/person/${missing}`, headers: admin })).statusCode, 404, 'without If-Match: 404 as before')
  const { id } = (await app.inject({ method: 'POST', url: '/person', headers: admin, payload: ADA })).json<{ id: string }>()
  t.equal((await app.inject({ method: 'PATCH', url: `/person/${id}`, headers: { ...admin, 'if-match': '*' }, payload: { age: 37 } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: `/person/${id}`, headers: { ...admin, 'if-match': '*' } })).statusCode, 200)
})

t.test('public pages are limited per client address by PUBLIC_RATE_LIMIT_MAX; probes and the login are not', async (t) => {
  const { app } = await build(t, { access: { limits: { publicMax: 3 } } })
  const statuses: number[] = []
  for (let i = 0; i < 4; i++) statuses.push((await app.inject({ url: '/openapi.json', remoteAddress: '10.0.0.1' })).statusCode)
  t.same(statuses, [200, 200, 200, 429])
  const refused = await app.inject({ url: '/openapi.json', remoteAddress: '10.0.0.1' })
  t.equal(refused.statusCode, 429, 'refused until the window ends')
  t.ok(Number(refused.headers['retry-after']) >= 1)
  t.equal((await app.inject({ url: '/openapi.json', remoteAddress: '10.0.0.2' })).statusCode, 200, 'another address has its own budget')
  for (let i = 0; i < 5; i++) t.equal((await app.inject({ url: '/health/live', remoteAddress: '10.0.0.1' })).statusCode, 200, 'probes are not counted')
})
