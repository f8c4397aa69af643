import t from 'tap'
import { uuidv7Generator, type Message, type Person } from '@people-service/domain'
import { createDatabase, createRepositories, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

/*
 * Friends of many people, inboxes of many and people by ids each load in
 * one statement, the same statement whatever the number of parents (so it
 * is prepared once), with the results the one-person reads give.
 */

const PEOPLE = 120
const LIMIT = 10

/** Opens the store twice: a plain handle, and one that records every statement it runs. */
const stores: Record<string, (t: Teardown) => Promise<{ url: string }>> = {
  'sqlite file': async (t) => ({ url: `sqlite:${(await sqliteFile(t)).path}` }),
  postgres: async (t) => {
    const database = await postgresDatabase(t)
    await database.reset()
    return database
  }
}

const seed = async (handle: DatabaseHandle): Promise<Person[]> => {
  const { people, friendships, messages } = createRepositories(handle)
  const ids = uuidv7Generator()
  const now = new Date()
  const everyone: Person[] = []
  for (let i = 0; i < PEOPLE; i++) {
    const person = { id: ids.next(), name: `Person ${i}`, age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await people.insert(person)
    everyone.push(person)
  }
  // From no friends and no messages to more than the limit; the last 20 have no friends.
  for (let i = 0; i < PEOPLE; i++) {
    const friends = i < 100 ? i % 8 : 0
    for (let k = 1; k <= friends; k++) await friendships.add(everyone[i]!.id, everyone[(i + k * 5) % 100]!.id, now)
    for (let m = 0; m < i % 13; m++) {
      const message: Message = { id: ids.next(), personId: everyone[i]!.id, text: `to ${i}: ${m}`, senderId: 'test', sentAt: new Date(now.getTime() + (m % 4) * 1000) }
      await messages.insert(message)
    }
  }
  return everyone
}

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: batch reads are one statement whatever the number of parents, with the one-person results`, async (t) => {
    const { url } = await open(t)
    const executed: string[] = []
    const logged = createDatabase({ url, log: (event) => { executed.push(event.query.sql) } })
    t.teardown(() => logged.close())
    const everyone = await seed(logged)
    const repositories = createRepositories(logged)
    const statementsOf = async (read: () => Promise<unknown>): Promise<{ statements: string[] }> => {
      executed.length = 0
      await read()
      return { statements: [...executed] }
    }

    const reads: Record<'friends' | 'inboxes', (ids: string[]) => Promise<Map<string, unknown[]>>> & { people: (ids: string[]) => Promise<Person[]> } = {
      friends: (ids: string[]) => repositories.friendships.listFriendsOfMany(ids, LIMIT),
      inboxes: (ids: string[]) => repositories.messages.listForMany(ids, LIMIT),
      people: (ids: string[]) => repositories.people.findByIds(ids)
    }
    for (const [name, read] of Object.entries(reads)) {
      const sqlSeen = new Set<string>()
      for (const size of [1, 2, 100]) {
        const ids = everyone.slice(PEOPLE - size).map((person) => person.id)
        const { statements } = await statementsOf(() => read(ids))
        t.equal(statements.length, 1, `${name} of ${size}: one statement`)
        for (const statement of statements) sqlSeen.add(statement)
      }
      t.equal(sqlSeen.size, 1, `${name}: the same statement for 1, 2 and 100 parents`)
    }

    const ids = everyone.map((person) => person.id)
    const friends = await reads.friends(ids)
    const inboxes = await reads.inboxes(ids)
    t.equal(friends.size, PEOPLE)
    t.equal(inboxes.size, PEOPLE)
    let friendsDiffer = 0
    let inboxesDiffer = 0
    for (const id of ids) {
      if (JSON.stringify(friends.get(id)) !== JSON.stringify(await repositories.friendships.listFriends(id, LIMIT))) friendsDiffer++
      if (JSON.stringify(inboxes.get(id)) !== JSON.stringify(await repositories.messages.listForPerson(id, { limit: LIMIT }))) inboxesDiffer++
    }
    t.equal(friendsDiffer, 0, 'every friend list as the one-person read gives it, in order')
    t.equal(inboxesDiffer, 0, 'every inbox as the one-person read gives it, newest first')
    t.ok([...friends.values()].some((list) => list.length === LIMIT) && [...inboxes.values()].some((list) => list.length === LIMIT), 'some lists are cut at the limit')
    t.ok([...friends.values()].some((list) => list.length === 0) && [...inboxes.values()].some((list) => list.length === 0), 'some are empty')

    const found = await reads.people([...ids, uuidv7Generator().next()])
    t.same(found.sort((a, b) => (a.id < b.id ? -1 : 1)), everyone, 'people by ids, unknown ids left out')
    t.same(await reads.friends([]), new Map())
    t.same(await reads.inboxes([]), new Map())
  })
}
