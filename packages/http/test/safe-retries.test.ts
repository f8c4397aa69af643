import t from 'tap'
import { createInMemoryPorts, fastPasswordHasher } from '@people-service/domain/testing'
import { ADA, build, type Injector } from './helper.js'

/*
 * API.md, "Safe retries and concurrent edits": Idempotency-Key on the routes
 * that create, ETag and conditional requests on people. In memory here; over
 * SQLite and PostgreSQL through test/sqlite/ and test/postgres/.
 */

const UNKNOWN = '01a1fe78-fcb4-7000-a350-7afc4e244c67'

const create = (api: Injector, body: object, key?: string, headers: Record<string, string> = {}) =>
  api.inject({ method: 'POST', url: '/person', payload: body, headers: { ...headers, ...(key === undefined ? {} : { 'idempotency-key': key }) } })

const countPeople = async (api: Injector): Promise<number> => (await api.inject('/people?limit=1000')).json().length

t.test('POST /person with an Idempotency-Key: a repeat gets the first answer again and creates nothing', async (t) => {
  const { api } = await build(t)
  const first = await create(api, ADA, 'create-ada-1')
  t.equal(first.statusCode, 201)
  t.equal(first.headers['idempotent-replayed'], undefined, 'the first answer is no replay')
  const again = await create(api, ADA, 'create-ada-1')
  t.equal(again.statusCode, 201)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.same(again.json(), first.json(), 'the same body')
  t.equal(again.headers.location, first.headers.location, 'the same Location')
  t.equal(again.headers.etag, first.headers.etag, 'the same ETag')
  t.equal(await countPeople(api), 1, 'one person')
  t.equal((await create(api, ADA)).statusCode, 201, 'without a key every request creates')
  t.equal(await countPeople(api), 2)
})

t.test('a replay is the first answer even after the person changed', async (t) => {
  const { api } = await build(t)
  const first = await create(api, { name: 'Ada' }, 'k')
  await api.inject({ method: 'PATCH', url: first.headers.location as string, payload: { age: 40 } })
  const again = await create(api, { name: 'Ada' }, 'k')
  t.same(again.json(), first.json())
  t.equal(again.headers.etag, '"1"')
})

t.test('the same key with another body, or on another route, is 422 IDEMPOTENCY_KEY_REUSED; another caller\'s key is theirs', async (t) => {
  const { api, app, as } = await build(t)
  const first = await create(api, { name: 'Ada' }, 'shared-key')
  const reused = await create(api, { name: 'Grace' }, 'shared-key')
  t.equal(reused.statusCode, 422)
  t.match(reused.json(), { statusCode: 422, error: 'Unprocessable Entity', code: 'IDEMPOTENCY_KEY_REUSED' })
  const elsewhere = await api.inject({ method: 'POST', url: '/message', headers: { 'idempotency-key': 'shared-key' }, payload: { personId: first.json().id, text: 'hi' } })
  t.equal(elsewhere.statusCode, 422, 'a key names one request, whatever the route')
  t.equal(await countPeople(api), 1)
  t.same((await api.inject(`/person/${first.json().id}/messages`)).json(), [], 'nothing sent')
  const editor = await as('editor')
  const theirs = await app.inject({ method: 'POST', url: '/person', headers: { ...editor, 'idempotency-key': 'shared-key' }, payload: { name: 'Grace' } })
  t.equal(theirs.statusCode, 201, 'another caller with the same key')
  t.equal(theirs.headers['idempotent-replayed'], undefined)
  t.equal(await countPeople(api), 2)
})

t.test('an Idempotency-Key of 1 to 255 visible characters is taken; anything else is 400 and nothing is created', async (t) => {
  const { api } = await build(t)
  const visible = Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')
  for (const key of ['x', 'k'.repeat(255), visible]) t.equal((await create(api, { name: `Key ${key.length}` }, key)).statusCode, 201, `${key.length} characters`)
  for (const [name, key] of [['empty', ''], ['256 characters', 'k'.repeat(256)], ['a space', 'a b'], ['a tab', 'a\tb'], ['beyond ASCII', 'clé']] as const) {
    const res = await create(api, { name: 'Nobody' }, key)
    t.equal(res.statusCode, 400, name)
    t.match(res.json(), { code: 'VALIDATION_FAILED', message: /idempotency-key/ }, name)
  }
  t.equal(await countPeople(api), 3)
})

t.test('POST /message with a key is sent once; a first attempt that failed runs again', async (t) => {
  const { api } = await build(t)
  const unknownFirst = await api.inject({ method: 'POST', url: '/message', headers: { 'idempotency-key': 'm1' }, payload: { personId: UNKNOWN, text: 'hello' } })
  t.equal(unknownFirst.statusCode, 404)
  t.equal((await api.inject({ method: 'POST', url: '/message', headers: { 'idempotency-key': 'm1' }, payload: { personId: UNKNOWN, text: 'hello' } })).statusCode, 404, 'run again: the failure was not remembered')
  const ada = (await create(api, ADA)).json()
  const send = () => api.inject({ method: 'POST', url: '/message', headers: { 'idempotency-key': 'm2' }, payload: { personId: ada.id, text: 'hello' } })
  const first = await send()
  t.equal(first.statusCode, 201)
  const again = await send()
  t.equal(again.statusCode, 201)
  t.equal(again.headers['idempotent-replayed'], 'true')
  t.equal(again.headers.location, `/message/${first.json().id}`)
  t.same(again.json(), first.json())
  t.equal((await api.inject(`/person/${ada.id}/messages`)).json().length, 1, 'one message')
})

t.test('concurrent repeats of one key: one creates, every other gets 409 or the first answer', async (t) => {
  const { api } = await build(t)
  const answers = await Promise.all(Array.from({ length: 6 }, () => create(api, { name: 'Racer' }, 'race')))
  const created = answers.filter((a) => a.statusCode === 201 && a.headers['idempotent-replayed'] === undefined)
  t.equal(created.length, 1, 'exactly one created')
  for (const answer of answers) {
    if (answer === created[0]) continue
    if (answer.statusCode === 409) {
      t.match(answer.json(), { statusCode: 409, code: 'IDEMPOTENCY_KEY_IN_USE' })
      t.equal(answer.headers['retry-after'], '1')
    } else {
      t.equal(answer.headers['idempotent-replayed'], 'true')
      t.same(answer.json(), created[0]?.json())
    }
  }
  t.comment(`statuses: ${answers.map((a) => `${a.statusCode}${a.headers['idempotent-replayed'] ? ' (replayed)' : ''}`).join(', ')}`)
  t.equal(await countPeople(api), 1)
  t.equal((await create(api, { name: 'Racer' }, 'race')).headers['idempotent-replayed'], 'true')
})

t.test('a repeat while the first request is still running is 409 with Retry-After', async (t) => {
  // In memory, transactions run one at a time: one held open keeps the
  // first request running, its key claimed, for as long as the test likes.
  const ports = createInMemoryPorts({ passwords: fastPasswordHasher() })
  const { api } = await build(t, { ports })
  let release = (): void => {}
  const ahead = ports.unitOfWork.run(() => new Promise<void>((resolve) => { release = resolve }))
  const first = create(api, { name: 'Slow' }, 'slow')
  await new Promise((resolve) => setTimeout(resolve, 50))
  const repeat = await create(api, { name: 'Slow' }, 'slow')
  t.equal(repeat.statusCode, 409)
  t.match(repeat.json(), { statusCode: 409, error: 'Conflict', code: 'IDEMPOTENCY_KEY_IN_USE' })
  t.equal(repeat.headers['retry-after'], '1')
  release()
  await ahead
  t.equal((await first).statusCode, 201)
  t.equal((await create(api, { name: 'Slow' }, 'slow')).headers['idempotent-replayed'], 'true')
  t.equal(await countPeople(api), 1)
})

t.test('every response that returns a person carries a strong ETag that changes with every change', async (t) => {
  const { api } = await build(t)
  const created = await create(api, ADA)
  const url = created.headers.location as string
  const tags = [created.headers.etag]
  t.match(created.headers.etag, /^"[^"]+"$/, 'strong: no W/')
  const read = await api.inject(url)
  t.equal(read.headers.etag, created.headers.etag, 'GET has the tag the create gave')
  for (const [method, path, body] of [
    ['PUT', url, { age: 37 }],
    ['PATCH', url, { age: 38 }],
    ['POST', url, { age: 39 }],
    ['POST', '/person', { id: created.json().id, age: 40 }],
    ['PATCH', url, { age: 41 }]
  ] as const) {
    const res = await api.inject({ method, url: path, payload: body })
    t.equal(res.statusCode, 200)
    t.ok(res.headers.etag, `${method} ${path} has an ETag`)
    t.notOk(tags.includes(res.headers.etag), `${method} ${path}: a new tag`)
    tags.push(res.headers.etag)
    t.equal((await api.inject(url)).headers.etag, res.headers.etag, 'GET agrees')
  }
  // An update that changes nothing is no change: the tag stays (docs/API.md).
  const same = await api.inject({ method: 'PATCH', url, payload: { age: 41 } })
  t.equal(same.statusCode, 200)
  t.equal(same.headers.etag, tags.at(-1), 'PATCH with the values already there keeps the tag')
})

t.test('If-None-Match with the current tag is 304 without a body; with an old one, the person', async (t) => {
  const { api } = await build(t)
  const created = await create(api, ADA)
  const url = created.headers.location as string
  const etag = created.headers.etag as string
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    const res = await api.inject({ url, headers: { 'if-none-match': ifNoneMatch } })
    t.equal(res.statusCode, 304, ifNoneMatch)
    t.equal(res.body, '', 'no body')
    t.equal(res.headers['content-length'], undefined, 'no length of a body it does not have')
    t.equal(res.headers.etag, etag)
  }
  const changed = await api.inject({ method: 'PATCH', url, payload: { age: 37 } })
  const stale = await api.inject({ url, headers: { 'if-none-match': etag } })
  t.equal(stale.statusCode, 200)
  t.same(stale.json(), changed.json())
  t.equal(stale.headers.etag, changed.headers.etag)
  t.equal((await api.inject({ url: `/person/${UNKNOWN}`, headers: { 'if-none-match': '*' } })).statusCode, 404)
})

t.test('If-Match that does not name the current tag: 412 PRECONDITION_FAILED, and nothing changed', async (t) => {
  const { api } = await build(t)
  const created = await create(api, ADA)
  const url = created.headers.location as string
  const old = created.headers.etag as string
  const current = (await api.inject({ method: 'PATCH', url, payload: { age: 37 } })).headers.etag as string
  const before = await api.inject(url)
  const id = created.json().id as string
  const writes = [['POST', url, { age: 1 }], ['PUT', url, { age: 2 }], ['PATCH', url, { age: 3 }], ['DELETE', url, undefined],
    ['POST', '/person', { id, age: 4 }]] as const
  for (const [method, path, body] of writes) {
    for (const ifMatch of [old, `W/${current}`, '"nonsense"', 'not-a-tag']) {
      const res = await api.inject({ method, url: path, headers: { 'if-match': ifMatch }, ...(body ? { payload: body } : {}) })
      t.equal(res.statusCode, 412, `${method} ${path === url ? url : `${path} with the id in the body`} If-Match: ${ifMatch}`)
      t.match(res.json(), { statusCode: 412, error: 'Precondition Failed', code: 'PRECONDITION_FAILED' })
    }
  }
  const after = await api.inject(url)
  t.same(after.json(), before.json(), 'nothing changed')
  t.equal(after.headers.etag, before.headers.etag)

  const matched = await api.inject({ method: 'PATCH', url, headers: { 'if-match': `${old}, ${current}` }, payload: { age: 50 } })
  t.equal(matched.statusCode, 200, 'a list holding the current tag matches')
  t.equal(matched.json().age, 50)
  t.equal((await api.inject({ method: 'PUT', url, headers: { 'if-match': '*' }, payload: { age: 51 } })).statusCode, 200, '* matches any person')
  const byBody = await api.inject({ method: 'POST', url: '/person', headers: { 'if-match': (await api.inject(url)).headers.etag as string }, payload: { id, age: 52 } })
  t.equal(byBody.statusCode, 200, 'POST /person with the id in the body and the current tag')
  t.equal(byBody.json().age, 52)
  t.equal((await api.inject({ method: 'PATCH', url: `/person/${UNKNOWN}`, headers: { 'if-match': old }, payload: { age: 1 } })).statusCode, 404, 'no person: 404 whatever the condition')
  const tag = (await api.inject(url)).headers.etag as string
  const deleted = await api.inject({ method: 'DELETE', url, headers: { 'if-match': tag } })
  t.equal(deleted.statusCode, 200)
  t.equal((await api.inject(url)).statusCode, 404)
})

t.test('two concurrent writes with the same If-Match: exactly one wins, the other is 412', async (t) => {
  const { api } = await build(t)
  for (let round = 0; round < 5; round++) {
    const created = await create(api, { name: 'Contested' })
    const url = created.headers.location as string
    const etag = created.headers.etag as string
    const [a, b] = await Promise.all([
      api.inject({ method: 'PATCH', url, headers: { 'if-match': etag }, payload: { name: 'Writer A' } }),
      api.inject({ method: 'PUT', url, headers: { 'if-match': etag }, payload: { name: 'Writer B' } })
    ])
    t.same([a!.statusCode, b!.statusCode].sort(), [200, 412], `round ${round}: ${a!.statusCode} / ${b!.statusCode}`)
    const winner = a!.statusCode === 200 ? a! : b!
    const now = await api.inject(url)
    t.same(now.json(), winner.json(), 'the stored person is the winner\'s')
    t.equal(now.headers.etag, winner.headers.etag)
  }
  const created = await create(api, { name: 'Deleted or changed' })
  const url = created.headers.location as string
  const etag = created.headers.etag as string
  const [change, removal] = await Promise.all([
    api.inject({ method: 'PATCH', url, headers: { 'if-match': etag }, payload: { age: 9 } }),
    api.inject({ method: 'DELETE', url, headers: { 'if-match': etag } })
  ])
  // The loser of a change is 412, or 404 when the delete won: there is no person left to change.
  const outcome = removal!.statusCode === 200 ? [404, 200] : [200, 412]
  t.same([change!.statusCode, removal!.statusCode], outcome, 'a change and a delete of one version: one of them')
  t.equal((await api.inject(url)).statusCode, removal!.statusCode === 200 ? 404 : 200)
})

t.test('concurrent changes without If-Match to different fields are all kept: none overwrites another', async (t) => {
  const { api } = await build(t)
  const created = await create(api, { name: 'Many editors' })
  const url = created.headers.location as string
  const patches = [{ age: 33 }, { email: 'editor@example.org' }, { address: { street: 'Main St' } }, { address: { city: 'Paris' } }, { address: { country: 'FR' } }]
  const answers = await Promise.all(patches.map((payload) => api.inject({ method: 'PATCH', url, payload })))
  t.same(answers.map((a) => a.statusCode), patches.map(() => 200))
  const final = await api.inject(url)
  t.match(final.json(), { name: 'Many editors', age: 33, email: 'editor@example.org', address: { street: 'Main St', city: 'Paris', country: 'FR' } })
  t.equal(final.headers.etag, `"${patches.length + 1}"`, 'one version per change')
})

t.test('the OpenAPI document lists the headers and statuses of safe retries and conditional requests', async (t) => {
  const { app } = await build(t)
  const doc = (await app.inject('/openapi.json')).json()
  const headersOf = (operation: { parameters?: Array<{ in: string, name: string }> }) =>
    (operation.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name)
  const create = doc.paths['/person'].post
  t.same(headersOf(create), ['idempotency-key', 'if-match'], 'POST /person: Idempotency-Key to create, If-Match to update')
  t.equal(create.responses['412']?.content['application/json'].schema.$ref, '#/components/schemas/Error', 'POST /person: 412 with the error schema')
  // Besides the headers every answer carries (X-Request-Id, RateLimit-*, Cache-Control: plugins/openapi.ts).
  const carries = (response: { headers: Record<string, unknown> }, names: string[]) => names.filter((name) => !(name in response.headers))
  t.same(carries(create.responses['201'], ['ETag', 'Idempotent-Replayed', 'Location']), [], 'POST /person 201: ETag, Idempotent-Replayed, Location')
  t.notOk('ETag' in create.responses['400'].headers, 'no ETag on an error')
  t.ok(create.responses['409'] && create.responses['422'], 'POST /person: 409 and 422')
  const send = doc.paths['/message'].post
  t.same(headersOf(send), ['idempotency-key'])
  t.same(carries(send.responses['201'], ['Idempotent-Replayed', 'Location']), [], 'POST /message 201: Idempotent-Replayed, Location')
  t.notOk('ETag' in send.responses['201'].headers, 'a message has no ETag')
  t.ok(send.responses['409'] && send.responses['422'], 'POST /message: 409 and 422')
  const person = doc.paths['/person/{id}']
  t.same(headersOf(person.get), ['if-none-match'])
  t.ok(person.get.responses['304'], 'GET: 304')
  t.same(carries(person.get.responses['200'], ['ETag']), [], 'GET 200: ETag')
  for (const method of ['post', 'put', 'patch', 'delete']) {
    t.same(headersOf(person[method]), ['if-match'], `${method}: If-Match`)
    t.equal(person[method].responses['412']?.content['application/json'].schema.$ref, '#/components/schemas/Error', `${method}: 412 with the error schema`)
  }
})
