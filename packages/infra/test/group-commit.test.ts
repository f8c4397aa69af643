import t from 'tap'
import { uuidv7Generator, type Person } from '@people-service/domain'
import { BetterSqlite3, createRepositories } from '@people-service/infra'
import { sqliteFile } from './helper.js'

/*
 * Concurrent writes share one commit (one fsync) on SQLite. What callers must
 * still see: a write resolves only once it is on disk, one write's failure
 * leaves the others alone, and no read shows a write before it is durable.
 */

const ids = uuidv7Generator()
const personNamed = (name: string): Person => {
  const now = new Date()
  return { id: ids.next(), name, age: 30, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
}

/** A second connection to the file: it sees committed data only. */
const outsider = (t: { teardown(fn: () => unknown): void }, path: string) => {
  const db = new BetterSqlite3(path, { readonly: true })
  t.teardown(() => db.close())
  const count = db.prepare('select count(*) as n from person where id = ?').pluck()
  return { has: (id: string) => count.get(id) === 1 }
}

t.test('every concurrent write is committed, and visible to another connection, when it resolves', async (t) => {
  const database = await sqliteFile(t)
  const { people } = createRepositories(database)
  const other = outsider(t, database.path)
  const batch = Array.from({ length: 200 }, (_, i) => personNamed(`Person ${i}`))
  const unseenWhenResolved: string[] = []
  await Promise.all(batch.map(async (person) => {
    await people.insert(person)
    if (!other.has(person.id)) unseenWhenResolved.push(person.id)
  }))
  t.same(unseenWhenResolved, [], 'no write resolved before another connection could read it')
  t.equal((await people.list({ limit: 500 })).length, 200)
})

t.test('a failing write fails alone: the writes beside it in the same commit are kept', async (t) => {
  const database = await sqliteFile(t)
  const { people } = createRepositories(database)
  const existing = personNamed('Already there')
  await people.insert(existing)
  const fresh = [personNamed('First'), personNamed('Second')]
  const outcomes = await Promise.allSettled([
    people.insert(fresh[0]!),
    people.insert(existing), // same id: the primary key refuses it
    people.insert(fresh[1]!)
  ])
  t.same(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  for (const person of fresh) t.ok(await people.findById(person.id), `${person.name} is stored`)
})

t.test('a transaction that rolls back undoes only itself', async (t) => {
  const database = await sqliteFile(t)
  const { people, friendships } = createRepositories(database)
  const ada = personNamed('Ada')
  await people.insert(ada)
  const grace = personNamed('Grace')
  const outcomes = await Promise.allSettled([
    people.insert(grace),
    friendships.add(ada.id, ids.next(), new Date()), // unknown friend: the transaction rolls back
    friendships.add(ada.id, grace.id, new Date()) // Grace's insert is in the same group
  ])
  t.same(outcomes.map((outcome) => outcome.status), ['fulfilled', 'rejected', 'fulfilled'])
  t.ok(await people.findById(grace.id))
  t.same((await friendships.listFriends(ada.id, 10)).map((friend) => friend.name), ['Grace'])
  t.same((await friendships.listFriends(grace.id, 10)).map((friend) => friend.name), ['Ada'])
})

t.test('a read issued while a write is pending answers only once that write is durable', async (t) => {
  const database = await sqliteFile(t)
  const { people } = createRepositories(database)
  const other = outsider(t, database.path)
  const person = personNamed('Pending')
  const written = people.insert(person)
  const read = await people.findById(person.id)
  t.ok(read, 'the read sees the write…')
  t.ok(other.has(person.id), '…because it is already committed')
  await written
})

t.test('a read issued while a transaction holds the connection answers once it ends, with its outcome', async (t) => {
  const database = await sqliteFile(t)
  const { people, unitOfWork } = createRepositories(database)
  const person = personNamed('Inside')
  let release = (): void => {}
  const gate = new Promise<void>((resolve) => { release = resolve })
  let inserted = (): void => {}
  const insertedInside = new Promise<void>((resolve) => { inserted = resolve })
  const work = unitOfWork.run(async (tx) => {
    await tx.people.insert(person)
    inserted()
    await gate
  })
  await insertedInside
  let answered = false
  const read = people.findById(person.id).then((found) => { answered = true; return found })
  await new Promise((resolve) => setTimeout(resolve, 20))
  t.notOk(answered, 'the read waits while the transaction is open')
  release()
  await work
  t.equal((await read)?.name, 'Inside', 'and then sees what it committed')
})

t.test('many concurrent transactions and writes all commit, each durable when it resolves', async (t) => {
  const database = await sqliteFile(t)
  const { people, friendships } = createRepositories(database)
  const other = outsider(t, database.path)
  const hub = personNamed('Hub')
  await people.insert(hub)
  const spokes = Array.from({ length: 150 }, (_, i) => personNamed(`Spoke ${i}`))
  const friendsSeen = new BetterSqlite3(database.path, { readonly: true })
  t.teardown(() => friendsSeen.close())
  const isFriend = friendsSeen.prepare('select count(*) from friendship join person p on p.pk = person_pk join person f on f.pk = friend_pk where p.id = ? and f.id = ?').pluck()
  const notDurable: string[] = []
  await Promise.all(spokes.map(async (spoke) => {
    await people.insert(spoke)
    if (!other.has(spoke.id)) notDurable.push(spoke.name)
    await friendships.add(hub.id, spoke.id, new Date())
    if (isFriend.get(spoke.id, hub.id) !== 1) notDurable.push(`${spoke.name}'s friendship`)
  }))
  t.same(notDurable, [])
  t.equal((await friendships.listFriends(hub.id, 200)).length, 150)
})
