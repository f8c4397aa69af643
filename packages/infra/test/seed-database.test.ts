import t from 'tap'
import { sql } from 'kysely'
import { uuidv7Generator } from '@people-service/domain'
import { createRepositories, seedDatabase, type DatabaseHandle, type SeedOptions } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: postgresDatabase
}

/** Every index and trigger, as the database states its definition. */
const schemaOf = async ({ db, dialect }: DatabaseHandle): Promise<string[]> => {
  const { rows } = dialect === 'sqlite'
    ? await sql<{ definition: string }>`select sql as definition from sqlite_master where type in ('index', 'trigger') and sql is not null`.execute(db)
    : await sql<{ definition: string }>`select indexdef as definition from pg_indexes where schemaname = current_schema()`.execute(db)
  return rows.map((row) => row.definition).sort()
}

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

    const result = await seedDatabase(handle, { ...options, onProgress: (phase, done, total) => reports.set(phase, [done, total]) })

    t.equal(result.ids.length, 301)
    t.equal(result.friendships, 301 * 10)
    t.equal(result.messages, 301 * 3)
    t.same(Object.fromEntries(reports), { people: [301, 301], friendships: [3010, 3010], messages: [903, 903] }, 'progress ends at each total')
    t.equal(await count(handle, sql`select count(*) as n from person`), 302, 'the person already there stays')
    t.equal(await count(handle, sql`select count(*) as n from friendship`), 301 * 20)
    t.equal(await count(handle, sql`select count(*) as n from (select person_pk from friendship group by person_pk having count(*) <> 20) odd`), 0, 'everyone has 20 friends')
    t.equal(await count(handle, sql`select count(*) as n from friendship f where f.person_pk = f.friend_pk or not exists
      (select 1 from friendship g where g.person_pk = f.friend_pk and g.friend_pk = f.person_pk)`), 0, 'no one befriends themselves, every friendship is stored both ways')
    t.equal(await count(handle, sql`select count(*) as n from message`), 903)
    t.same(await schemaOf(handle), schema, 'every index and trigger set aside is back as it was')

    // The indexes serve again: the name search (rebuilt from the table), and
    // its upkeep for people who come later; friends and the inbox.
    const seeded = await repositories.people.findById(result.ids[150] as string)
    t.ok(seeded)
    const needle = (seeded?.name ?? '').split(' ').pop() as string
    t.same((await repositories.people.list({ limit: 10, nameContains: needle })).map((person) => person.id), [seeded?.id])
    const later = { ...before, id: uuidv7Generator().next(), name: 'Zelda Afterwards' }
    await repositories.people.insert(later)
    t.same((await repositories.people.list({ limit: 10, nameContains: 'zelda after' })).map((person) => person.id), [later.id])
    t.equal((await repositories.friendships.listFriends(result.ids[0] as string, 100)).length, 20)
    t.equal((await repositories.messages.listForPerson(result.ids[300] as string, { limit: 10 })).length, 3)
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

t.test('everyone gets exactly the friends asked for, odd counts included, up to everyone else', async (t) => {
  for (const people of [1, 2, 3, 7, 8, 10]) {
    for (const friends of [0, 1, 2, 3, 5, 6, 9, 20]) {
      const handle = await sqliteFile(t)
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
