import t from 'tap'
import { sql, type Kysely } from 'kysely'
import { uuidv7Generator } from '@people-service/domain'
import { createRepositories, migrateTo, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { schemaOf, sqliteFile } from './helper.js'

/*
 * The migration 0007-compact-storage on a database that holds data:
 * seeded under the previous schema, migrated up (and down and up again),
 * every person, friendship and message is still there under the same
 * public ids, friend lists keep their order, and deleting a person still
 * takes their friendships (both ways) and their messages along.
 */

const PREVIOUS = '0006-person-version-and-idempotency'
const PEOPLE = 120
const FRIENDS = 6
const MESSAGES = 2

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: async (t) => {
    const database = await postgresDatabase(t)
    await database.reset()
    return database
  }
}

interface Snapshot {
  people: Array<Record<string, unknown>>
  /** "person friend" pairs, sorted. */
  friendships: string[]
  messages: Array<Record<string, unknown>>
}

/** Rows as the previous schema held them, inserted in a shuffled order so keys cannot follow insertion. */
const seedPreviousSchema = async (db: Kysely<any>, dialect: DatabaseHandle['dialect']): Promise<{ ids: string[], friendsOf: Map<string, string[]> }> => {
  const generator = uuidv7Generator()
  const ids = Array.from({ length: PEOPLE }, () => generator.next())
  const at = (i: number): string => new Date(Date.UTC(2026, 10, 1) + i * 1000).toISOString()
  const order = ids.map((_, i) => (i * 37) % PEOPLE)
  for (const i of order) {
    await db.insertInto('person').values({
      id: ids[i],
      name: `Person ${i}`,
      name_lower: `person ${i}`,
      age: i % 3 === 0 ? null : 20 + i,
      email: i % 2 === 0 ? `p${i}@example.org` : null,
      has_address: i % 4 === 0 ? 0 : 1,
      street: i % 4 === 1 ? `${i} Main Street` : null,
      city: i % 4 === 0 ? null : 'Lisbon',
      country: null,
      created_at: at(i),
      updated_at: at(i + 1),
      version: 1 + (i % 5)
    }).execute()
  }
  const friendsOf = new Map<string, string[]>(ids.map((id) => [id, []]))
  const pairs: Array<[string, string]> = []
  for (let a = 0; a < PEOPLE; a++) {
    for (let o = 1; o <= FRIENDS / 2; o++) {
      const b = (a + o * 7) % PEOPLE
      pairs.push([ids[a] as string, ids[b] as string], [ids[b] as string, ids[a] as string])
    }
  }
  for (const [person, friend] of pairs) {
    friendsOf.get(person)?.push(friend)
    await db.insertInto('friendship').values({ person_id: person, friend_id: friend, created_at: at(0) }).execute()
  }
  for (const list of friendsOf.values()) list.sort()
  for (const i of order) {
    for (let m = 0; m < MESSAGES; m++) {
      await db.insertInto('message').values({
        id: generator.next(), person_id: ids[i], text: `Message ${m} to ${i}`, sender_id: ids[(i + 1) % PEOPLE], sent_at: at(i + m)
      }).execute()
    }
  }
  if (dialect === 'postgres') await sql`analyze`.execute(db)
  return { ids, friendsOf }
}

const normalise = (row: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(row).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value]))

/** Everything the service can read, by public id, under either schema. */
const snapshot = async (db: Kysely<any>, compact: boolean): Promise<Snapshot> => {
  const people = (await sql<Record<string, unknown>>`select id, name, name_lower, age, email, has_address, street, city, country,
    created_at, updated_at, version from person order by id`.execute(db)).rows.map(normalise)
  const friendshipRows = compact
    ? await sql<{ a: string, b: string }>`select p.id as a, f.id as b from friendship x
        join person p on p.pk = x.person_pk join person f on f.pk = x.friend_pk`.execute(db)
    : await sql<{ a: string, b: string }>`select person_id as a, friend_id as b from friendship`.execute(db)
  const messages = (compact
    ? await sql<Record<string, unknown>>`select m.id, p.id as person_id, m.text, m.sender_id, m.sent_at
        from message m join person p on p.pk = m.person_pk order by m.id`.execute(db)
    : await sql<Record<string, unknown>>`select id, person_id, text, sender_id, sent_at from message order by id`.execute(db)
  ).rows.map(normalise)
  return { people, friendships: friendshipRows.rows.map(({ a, b }) => `${a} ${b}`).sort(), messages }
}

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: compact storage keeps every person, friendship and message of a seeded database`, async (t) => {
    const handle = await open(t)
    await migrateTo(handle, PREVIOUS)
    const previousSchema = await schemaOf(handle)
    const { ids, friendsOf } = await seedPreviousSchema(handle.db, handle.dialect)
    const before = await snapshot(handle.db, false)
    t.equal(before.people.length, PEOPLE)
    t.equal(before.friendships.length, PEOPLE * FRIENDS)
    t.equal(before.messages.length, PEOPLE * MESSAGES)

    await migrateToLatest(handle)
    t.same(await snapshot(handle.db, true), before, 'every person, friendship (both ways) and message, by the same ids')

    const { people, friendships, messages } = createRepositories(handle)
    for (const id of ids) {
      const friends = await friendships.listFriends(id, 100)
      t.same(friends.map((friend) => friend.id), friendsOf.get(id), 'friends in id order, as before')
    }
    const [first] = await messages.listForPerson(ids[5] as string, { limit: 1 })
    t.match(first, { personId: ids[5], text: 'Message 1 to 5' }, 'the inbox reads by public id, newest first')

    t.test('deleting a person removes their friendships both ways and their messages', async (t) => {
      const gone = ids[10] as string
      const theirFriends = friendsOf.get(gone) as string[]
      t.ok(await people.delete(gone))
      const after = await snapshot(handle.db, true)
      t.same(after.friendships, before.friendships.filter((pair) => !pair.split(' ').includes(gone)))
      t.equal(after.friendships.length, before.friendships.length - 2 * FRIENDS)
      t.same(after.messages, before.messages.filter((message) => message.person_id !== gone))
      for (const friend of theirFriends) {
        t.notOk((await friendships.listFriends(friend, 100)).some((f) => f.id === gone), 'gone from their friend list')
      }
      const { rows } = await sql<{ n: number | string }>`select count(*) as n from friendship x
        where not exists (select 1 from person p where p.pk = x.friend_pk)`.execute(handle.db)
      t.equal(Number(rows[0]?.n), 0, 'no friendship points at nobody')
    })

    t.test('new people get keys after the migrated ones and befriend them', async (t) => {
      const now = new Date()
      const newcomer = { id: uuidv7Generator().next(), name: 'Newcomer', age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
      await people.insert(newcomer)
      await friendships.add(newcomer.id, ids[0] as string, now)
      t.same(await friendships.listFriends(newcomer.id, 10), [{ id: ids[0], name: 'Person 0' }])
      t.same((await friendships.listFriends(ids[0] as string, 100)).at(-1), { id: newcomer.id, name: 'Newcomer' }, 'the newest friend comes last')
    })

    t.test('the migration goes down to the previous schema with the same rows, and up again', async (t) => {
      const current = await snapshot(handle.db, true)
      await migrateTo(handle, PREVIOUS)
      t.same(await snapshot(handle.db, false), current)
      t.same(await schemaOf(handle), previousSchema, 'the same indexes, triggers and constraints as before')
      await migrateToLatest(handle)
      t.same(await snapshot(handle.db, true), current)
      t.same((await friendships.listFriends(ids[1] as string, 100)).map((friend) => friend.id), friendsOf.get(ids[1] as string))
    })
  })
}
