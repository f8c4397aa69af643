import t from 'tap'
import { sql } from 'kysely'
import { uuidv7Generator } from '@people-service/domain'
import { createRepositories, seedDatabase, type DatabaseHandle, type SeedOptions } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { schemaOf, sqliteFile } from './helper.js'

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: postgresDatabase
}

/** A UUIDv7 in canonical form: version 7, RFC 9562 variant. */
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const count = async ({ db }: DatabaseHandle, query: ReturnType<typeof sql<{ n: number | string }>>): Promise<number> =>
  Number((await query.execute(db)).rows[0]?.n)

const options: SeedOptions = { people: 301, friends: 20, messages: 3 }

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: a seed adds people with exactly their friends, both ways, and their messages`, async (t) => {
    const handle = await open(t)
    const repositories = createRepositories(handle)
    const now = new Date()
    const before = { id: uuidv7Generator().next(), name: 'Grace Before', age: null, email: null, address: null, createdAt: now, updatedAt: now, version: 1 }
    await repositories.people.insert(before)
    const schema = await schemaOf(handle)
    const reports = new Map<string, [number, number]>()
    // FTS5 writes a segment each time this much is pending: small, so that
    // 301 names make several, as a million do with the default (1 MB).
    if (handle.dialect === 'sqlite') await sql`insert into person_name (person_name, rank) values ('hashsize', 1024)`.execute(handle.db)

    const result = await seedDatabase(handle, { ...options, onProgress: (phase, done, total) => reports.set(phase, [done, total]) })

    t.equal(result.ids.length, 301)
    t.equal(result.friendships, 301 * 10)
    t.equal(result.messages, 301 * 3)
    t.same(Object.fromEntries(reports), { people: [301, 301], friendships: [3010, 3010], messages: [903, 903] }, 'progress ends at each total')
    t.equal(await count(handle, sql`select count(*) as n from person`), 302, 'the person already there stays')
    t.equal(await count(handle, sql`select count(*) as n from friendship`), 301 * 20)
    t.equal(await count(handle, sql`select count(*) as n from person p where (select count(*) from friendship f where f.person_pk = p.pk) <> 20
      and p.id <> ${before.id}`), 0, 'everyone seeded has 20 friends')
    t.equal(await count(handle, sql`select count(*) as n from friendship f where f.person_pk = f.friend_pk or not exists
      (select 1 from friendship g where g.person_pk = f.friend_pk and g.friend_pk = f.person_pk)`), 0, 'no one befriends themselves, every friendship is stored both ways')
    t.equal(await count(handle, sql`select count(*) as n from friendship f join person p on p.pk = f.person_pk join person q on q.pk = f.friend_pk
      where p.id = ${before.id} or q.id = ${before.id}`), 0, 'the person already there is no one\'s friend')
    t.equal(await count(handle, sql`select count(*) as n from message`), 903)
    t.equal(await count(handle, sql`select count(*) as n from person p where (select count(*) from message m where m.person_pk = p.pk) <> 3
      and p.id <> ${before.id}`), 0, 'everyone seeded has 3 messages')
    t.same(await schemaOf(handle), schema, 'every index, trigger and foreign key set aside is back as it was')
    if (handle.dialect === 'sqlite') {
      // Rebuilt, then merged: the writes that follow do not merge into the seed's segments again and again.
      const segments = async () => count(handle, sql`select count(distinct segid) as n from person_name_idx`)
      t.equal(await segments(), 1, 'the name index in one segment')
      // What the seed saves the writes that follow: a rebuild alone leaves several.
      await sql`insert into person_name (person_name) values ('rebuild')`.execute(handle.db)
      t.ok(await segments() > 1, 'a rebuild alone leaves several segments')
      await sql`insert into person_name (person_name) values ('optimize')`.execute(handle.db)
    }

    // Every id is a UUIDv7, once; people's in creation order, as the service makes them.
    const people = (await sql<{ id: string }>`select id from person where id <> ${before.id} order by pk`.execute(handle.db)).rows.map(({ id }) => id)
    t.same(people, result.ids, 'the ids reported, in key order')
    t.same([...people].sort(), people, 'ids increase with creation')
    const messageIds = (await sql<{ id: string }>`select id from message`.execute(handle.db)).rows.map(({ id }) => id)
    t.same([...people, ...messageIds].filter((id) => !UUID_V7.test(id)), [], 'every id a UUIDv7')
    t.equal(new Set(messageIds).size, 903, 'no message id twice')

    // The indexes serve again: the name search (rebuilt from the table), and
    // its upkeep for people who come later; friends and the inbox.
    const seeded = await repositories.people.findById(result.ids[150] as string)
    t.ok(seeded)
    // Every column where it belongs (the loaders bind them by position).
    t.match(seeded, {
      name: /^\S+ .+ \d+$/,
      age: Number,
      email: /^[a-z.-]+\.\d+@example\.org$/,
      address: { street: /^\d+ .+ Street$/, city: /^[A-Z][a-z]+$/, country: /^[A-Z]{2}$/ },
      version: 1
    })
    t.equal(seeded?.email?.match(/\.(\d+)@/)?.[1], seeded?.name.split(' ').pop(), 'name and e-mail of the same person')
    const needle = (seeded?.name ?? '').split(' ').pop() as string
    t.same((await repositories.people.list({ limit: 10, nameContains: needle })).map((person) => person.id), [seeded?.id])
    const later = { ...before, id: uuidv7Generator().next(), name: 'Zelda Afterwards' }
    await repositories.people.insert(later)
    t.same((await repositories.people.list({ limit: 10, nameContains: 'zelda after' })).map((person) => person.id), [later.id])
    const friends = await repositories.friendships.listFriends(result.ids[0] as string, 100)
    t.equal(friends.length, 20)
    for (const friend of friends.slice(0, 3)) {
      t.ok((await repositories.friendships.listFriends(friend.id, 100)).some(({ id }) => id === result.ids[0]), 'a friend\'s friend list names them back')
    }
    const inbox = await repositories.messages.listForPerson(result.ids[300] as string, { limit: 10 })
    t.equal(inbox.length, 3)
    t.ok(inbox.every((message) => message.personId === result.ids[300] && message.sentAt <= new Date()), 'messages already sent')
    // A message sent now comes first in the inbox, before those of the seed.
    const fresh = { id: uuidv7Generator().next(), personId: result.ids[300] as string, text: 'hello', senderId: 'someone', sentAt: new Date() }
    await repositories.messages.insert(fresh)
    t.equal((await repositories.messages.listForPerson(result.ids[300] as string, { limit: 10 }))[0]?.id, fresh.id)
  })

  t.test(`${store}: a seed that stops halfway through a table leaves that table, and its indexes, as they were`, async (t) => {
    const handle = await open(t)
    const schema = await schemaOf(handle)
    await t.rejects(seedDatabase(handle, {
      ...options,
      onProgress (phase, done) {
        if (phase === 'friendships' && done > 1000) throw new Error('interrupted')
      }
    }), { message: 'interrupted' })
    t.equal(await count(handle, sql`select count(*) as n from person`), 301, 'the people loaded before stay')
    t.equal(await count(handle, sql`select count(*) as n from friendship`), 0)
    t.equal(await count(handle, sql`select count(*) as n from message`), 0)
    t.same(await schemaOf(handle), schema)
  })
}

// Every shape on SQLite; on PostgreSQL, one of each kind (even, odd with an opposite, odd with neighbours, all).
const shapes: Record<string, Array<[number, number[]]>> = {
  'sqlite file': [1, 2, 3, 7, 8, 10].map((people) => [people, [0, 1, 2, 3, 5, 6, 9, 20]]),
  postgres: [[7, [3, 4]], [8, [3]], [10, [20]]]
}

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: everyone gets exactly the friends asked for, odd counts included, up to everyone else`, async (t) => {
    for (const [people, asked] of shapes[store] ?? []) {
      for (const friends of asked) {
        const handle = await open(t)
        const result = await seedDatabase(handle, { people, friends, messages: 0 })
        const { rows } = await sql<{ n: number }>`select count(f.person_pk) as n from person p left join friendship f on f.person_pk = p.pk group by p.pk`.execute(handle.db)
        const counts = rows.map((row) => Number(row.n)).sort((a, b) => a - b)
        const each = Math.min(friends, people - 1)
        // n people cannot all have an odd number of friends when n is odd: one has one less.
        const expected = Array.from({ length: people }, (_, i) => (i === 0 && each % 2 === 1 && people % 2 === 1 ? each - 1 : each))
        t.same(counts, expected, `${people} people, --friends ${friends}`)
        t.equal(result.friendships * 2, counts.reduce((sum, n) => sum + n, 0), 'the reported count is of friendships, each stored twice')
        t.equal(await count(handle, sql`select count(*) as n from friendship f where f.person_pk = f.friend_pk or not exists
        (select 1 from friendship g where g.person_pk = f.friend_pk and g.friend_pk = f.person_pk)`), 0, 'mutual, never oneself')
      }
    }
  })
}
