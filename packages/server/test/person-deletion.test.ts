import t from 'tap'
import { uuidv7Generator, type Message } from '@people-service/domain'
import { createDatabase, createRepositories, migrateToLatest, seedDatabase } from '@people-service/infra'
import type { Teardown } from '@people-service/infra/testing'
import { call, login, start, tempDatabaseUrl } from './helper.js'

/*
 * A person with very many messages or friends is deleted a step at a time
 * (infra's person-deletion.ts): in one statement, 40,000 messages of 1,000
 * characters held the event loop for the whole deletion, every other request
 * waiting behind it. Through the real server, over REST and GraphQL.
 */

const MESSAGES = 40_000
const FRIENDS = 2_500
const ids = uuidv7Generator()

interface World {
  url: string
  /** The one with MESSAGES messages and FRIENDS friends; the other with a tenth of each. */
  big: string
  other: string
  /** Friends of both, and a message to each of the two and to the friend. */
  friend: string
  messageToBig: string
  messageToOther: string
  kept: Message
}

const seeded = async (t: Teardown): Promise<World> => {
  const url = tempDatabaseUrl(t)
  const handle = createDatabase({ url })
  await migrateToLatest(handle)
  await seedDatabase(handle, { people: FRIENDS + 2, friends: 0, messages: 0 })
  const { friendships, messages } = createRepositories(handle)
  const [big, other, ...everyone] = (await handle.db.selectFrom('person').select('id').orderBy('id').execute()).map((row) => row.id)
  const message = (personId: string, text: string): Message => ({ id: ids.next(), personId, text, senderId: 'seed', sentAt: new Date() })
  const inBatches = async <T>(items: T[], each: (item: T) => Promise<void>) => {
    for (let start = 0; start < items.length; start += 1000) await Promise.all(items.slice(start, start + 1000).map(each))
  }
  const text = 'x'.repeat(1000)
  await inBatches([...Array.from({ length: MESSAGES }, () => message(big!, text)), ...Array.from({ length: MESSAGES / 10 }, () => message(other!, text))],
    (m) => messages.insert(m))
  await inBatches(everyone, async (id) => { await friendships.add(big!, id, new Date()) })
  await inBatches(everyone.slice(0, FRIENDS / 10), async (id) => { await friendships.add(other!, id, new Date()) })
  const [messageToBig, messageToOther, kept] = [message(big!, 'to big'), message(other!, 'to other'), message(everyone[0]!, 'to the friend')]
  for (const m of [messageToBig, messageToOther, kept]) await messages.insert(m)
  await handle.close()
  return { url, big: big!, other: other!, friend: everyone[0]!, messageToBig: messageToBig.id, messageToOther: messageToOther.id, kept }
}

t.test('deleting a person with very many messages and friends lets other requests through, and takes all of theirs and nothing else', async (t) => {
  const world = await seeded(t)
  const server = await start(t, { DATABASE_URL: world.url, RATE_LIMIT_MAX: '0' })
  const admin = await login(server.url)
  const get = async (path: string) => call(server.url, 'GET', path, admin)

  const stale = await call(server.url, 'DELETE', `/person/${world.big}`, { ...admin, 'if-match': '"7"' })
  t.equal(stale.status, 412, 'a stale If-Match')
  t.equal((await get(`/person/${world.big}/messages?limit=100`)).json().length, 100, 'deletes not one message')
  t.ok((await get(`/person/${world.friend}/friends?limit=100`)).json().some((f: { id: string }) => f.id === world.big), 'nor a friendship')

  // Other requests are answered while the deletion runs: one statement
  // would have let one of them through at most.
  const deletion = { done: false }
  const deleting = call(server.url, 'DELETE', `/person/${world.big}`, { ...admin, 'if-match': '"1"' }).finally(() => { deletion.done = true })
  let answeredMeanwhile = 0
  const statuses = new Set<number>()
  while (!deletion.done) {
    statuses.add((await call(server.url, 'GET', '/health/live')).status)
    if (!deletion.done) answeredMeanwhile++
  }
  const response = await deleting
  t.equal(response.status, 200)
  t.same(response.json(), { id: world.big, deleted: true })
  t.ok(answeredMeanwhile >= 10, `${answeredMeanwhile} other requests answered while it ran`)
  t.same([...statuses], [200])

  t.equal((await get(`/person/${world.big}`)).status, 404)
  t.equal((await get(`/message/${world.messageToBig}`)).status, 404, 'their messages went with them')
  t.notOk((await get(`/person/${world.friend}/friends?limit=100`)).json().some((f: { id: string }) => f.id === world.big), 'their friends no longer have them')
  t.same((await get(`/message/${world.kept.id}`)).json(), { ...world.kept, sentAt: world.kept.sentAt.toISOString() }, "another's message stays")
  t.equal((await get(`/person/${world.other}/messages?limit=100`)).json().length, 100, "another's inbox stays")

  const graphql = await call(server.url, 'POST', '/graphql', admin, { query: 'mutation ($id: ID!) { deletePerson(id: $id) }', variables: { id: world.other } })
  t.same(graphql.json().data, { deletePerson: world.other }, 'GraphQL deletes a person with thousands of messages too')
  t.equal((await get(`/person/${world.other}`)).status, 404)
  t.equal((await get(`/message/${world.messageToOther}`)).status, 404)
  t.same((await get(`/person/${world.friend}/friends?limit=100`)).json(), [], 'the friend has neither of them now')
})
