import { PeopleServiceClient, PeopleServiceError, PreconditionFailedError, type Account, type CreatedApiKey, type Page, type Person, type PersonSummary } from '@people-service/client'
import t from 'tap'
import { adminClient, adminToken, collect, recordingFetch, startService, type Sent } from './helper.js'

/*
 * The client against the real server on a real port (SQLite file): what a
 * service using it sees, request by request.
 */

const service = await startService(t)
const sent: Sent[] = []
const client = await adminClient(service.url, { fetch: recordingFetch(sent) })

t.test('people: create, read, conditional update and delete, with the typed error for a stale ETag', async (t) => {
  const ada = await client.people.create({ name: 'Ada Lovelace', age: 36, email: 'ada@example.org' })
  t.equal(ada.name, 'Ada Lovelace')
  t.equal(ada.lastResponse.statusCode, 201)
  t.equal(ada.lastResponse.location, `/person/${ada.id}`)
  t.match(ada.lastResponse.etag, /^"/, 'a strong ETag')
  t.notOk(ada.lastResponse.replayed)
  t.notOk(Object.keys(ada).includes('lastResponse'), 'the response information stays out of the data')
  t.match(sent.at(-1)?.headers['idempotency-key'], /^[0-9a-f-]{36}$/, 'a create carries an Idempotency-Key the caller did not have to make')

  const read = await client.people.get(ada.id)
  t.same(read, ada)
  t.equal(read.lastResponse.etag, ada.lastResponse.etag)

  const older = await client.people.update(ada.id, { age: 37 }, { ifMatch: read.lastResponse.etag })
  t.equal(older.age, 37)
  t.not(older.lastResponse.etag, read.lastResponse.etag, 'a new version, a new tag')

  const stale = await client.people.update(ada.id, { age: 99 }, { ifMatch: read.lastResponse.etag }).catch((error: unknown) => error)
  t.type(stale, PreconditionFailedError)
  t.type(stale, PeopleServiceError, 'one class to catch every failure')
  const error = stale as PreconditionFailedError
  t.equal(error.statusCode, 412)
  t.equal(error.code, 'PRECONDITION_FAILED')
  t.match(error.requestId, /\S/, 'the request id to quote')
  t.equal((await client.people.get(ada.id)).age, 37, 'nothing changed')

  t.same(await client.people.delete(ada.id, { ifMatch: older.lastResponse.etag }), { id: ada.id, deleted: true })
  const gone = await client.people.get(ada.id).catch((error: unknown) => error) as PeopleServiceError
  t.type(gone, PeopleServiceError)
  t.equal(gone.statusCode, 404)
  t.match(gone.message, /no person/)
})

t.test('an error carries the request id the service logged, and its code', async (t) => {
  const tagged = new PeopleServiceClient({ baseUrl: service.url, apiKey: 'not-a-key', headers: { 'x-request-id': 'client-test-1' } })
  const error = await tagged.people.get('anyone').catch((error: unknown) => error) as PeopleServiceError
  t.type(error, PeopleServiceError)
  t.equal(error.statusCode, 401)
  t.equal(error.requestId, 'client-test-1')
  t.match(error.body, { statusCode: 401, error: 'Unauthorized' })
})

t.test('people.list follows Link cursors, page after page, with the filter kept', async (t) => {
  const names = ['Ada', 'Adam', 'Adele', 'Bob', 'Madame', 'Ludwig', 'Adaline']
  for (const name of names) await client.people.create({ name })
  sent.length = 0
  const found = await collect(client.people.list({ name: 'ad', limit: 2 }))
  t.same(found.map((p) => p.name).sort(), ['Ada', 'Adaline', 'Adam', 'Adele', 'Madame'])
  t.same(found.map((p) => p.id), found.map((p) => p.id).sort(), 'in id order, as the service pages them')
  t.equal(sent.length, 3, 'three pages of two, asked for one by one')
  t.ok(sent.every((request) => new URL(request.url).searchParams.get('name') === 'ad'))

  const pages: Array<Page<PersonSummary>> = []
  for await (const page of client.people.list({ limit: 4 }).pages()) pages.push(page)
  t.same(pages.map((page) => page.items.length), [4, 3])
  t.type(pages[0]?.nextCursor, 'string')
  t.equal(pages[1]?.nextCursor, undefined, 'the last page links nowhere')

  sent.length = 0
  const first = await client.people.list({ limit: 1 })[Symbol.asyncIterator]().next()
  t.ok(first.value?.id)
  t.equal(sent.length, 1, 'the first person costs one page, and the next page is asked for only when wanted')
})

t.test('friends and inboxes iterate too; messages are sent once', async (t) => {
  const grace = await client.people.create({ name: 'Grace' })
  const friends: Person[] = []
  for (let i = 0; i < 4; i++) friends.push(await client.people.create({ name: `Friend ${i}` }))
  for (const friend of friends) t.same(await client.people.befriend(grace.id, friend.id), { personId: grace.id, friendId: friend.id })
  t.same((await collect(client.people.friends(grace.id))).map((f) => f.id), friends.map((f) => f.id))
  t.same((await collect(client.people.friends(friends[0]!.id))).map((f) => f.name), ['Grace'], 'friendship is mutual')
  t.same(await client.people.unfriend(grace.id, friends[3]!.id), { personId: grace.id, friendId: friends[3]!.id, deleted: true })

  const texts = ['one', 'two', 'three', 'four', 'five']
  for (const text of texts) {
    const message = await client.messages.send({ personId: grace.id, text })
    t.equal(message.lastResponse.statusCode, 201)
  }
  const inbox = await collect(client.people.inbox(grace.id, { limit: 2 }))
  t.same(inbox.map((m) => m.text), [...texts].reverse(), 'newest first, across three pages')
  t.same(await client.messages.get(inbox[0]!.id), inbox[0])
})

t.test('keys and accounts: create, iterate, use, delete', async (t) => {
  const keys: CreatedApiKey[] = []
  for (let i = 0; i < 3; i++) keys.push(await client.apiKeys.create({ name: `key ${i}`, scopes: ['people:read'] }))
  const listed = await collect(client.apiKeys.list({ limit: 2 }))
  t.same(listed.map((k) => k.id).filter((id) => keys.some((k) => k.id === id)).length, 3)
  t.notOk(listed.some((k) => 'key' in k), 'no secret in a list')

  const reader = new PeopleServiceClient({ baseUrl: service.url, apiKey: keys[0]!.key })
  t.same((await reader.users.me()).scopes, ['people:read'])
  const refused = await reader.people.create({ name: 'Not allowed' }).catch((error: unknown) => error) as PeopleServiceError
  t.equal(refused.statusCode, 403)
  t.equal((await client.apiKeys.usage(keys[0]!.id)).total, 2, 'both requests of the key counted')
  t.same(await client.apiKeys.delete(keys[0]!.id), { id: keys[0]!.id, deleted: true })
  t.equal((await reader.users.me().catch((error: unknown) => error) as PeopleServiceError).statusCode, 401, 'a deleted key stops at once')

  const accounts: Account[] = []
  for (const username of ['carol', 'dave', 'erin']) accounts.push(await client.users.create({ username, password: `${username} has a long password`, role: 'viewer' }))
  t.same((await collect(client.users.list({ limit: 2 }))).map((a) => a.username), ['admin', 'carol', 'dave', 'erin'])
  t.equal((await client.users.update(accounts[0]!.id, { role: 'editor' })).role, 'editor')
  t.same(await client.users.delete(accounts[2]!.id), { id: accounts[2]!.id, deleted: true })
  const taken = await client.users.create({ username: 'carol', password: 'another long password', role: 'viewer' }).catch((error: unknown) => error) as PeopleServiceError
  t.equal(taken.statusCode, 409)
  t.equal(taken.code, 'USERNAME_TAKEN')
})

t.test('an access token given as a function is asked for before every request (tokens that renew)', async (t) => {
  const token = await adminToken(service.url)
  let asked = 0
  const requests: Sent[] = []
  const renewing = new PeopleServiceClient({ baseUrl: service.url, accessToken: async () => { asked++; return token }, fetch: recordingFetch(requests) })
  t.equal((await renewing.users.me()).username, 'admin')
  await collect(renewing.people.list({ limit: 3 }))
  t.ok(requests.length > 2, `several pages (${requests.length} requests)`)
  t.equal(asked, requests.length, 'once per request')
  t.ok(requests.every((request) => request.headers.authorization === `Bearer ${token}`))
})

t.test('a base URL with a path is refused at once, not followed by surprising requests', async (t) => {
  t.throws(() => new PeopleServiceClient({ baseUrl: `${service.url}/api` }), { name: 'TypeError', message: /origin/ })
  t.doesNotThrow(() => new PeopleServiceClient({ baseUrl: `${service.url}/` }))
})

t.test('a Link to another origin is not followed with the credentials', async (t) => {
  const foreign = new PeopleServiceClient({
    baseUrl: service.url,
    apiKey: 'secret',
    fetch: async (url) => ({
      status: 200,
      headers: new Headers(url.startsWith(service.url) ? { link: '<http://attacker.example/people?cursor=x>; rel="next"' } : {}),
      text: async () => '[{"id":"a","name":"A"}]'
    })
  })
  const error = await collect(foreign.people.list()).catch((error: unknown) => error) as PeopleServiceError
  t.type(error, PeopleServiceError)
  t.equal(error.code, 'INVALID_RESPONSE')
  t.match(error.message, /attacker\.example/)
})
