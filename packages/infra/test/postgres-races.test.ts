import t from 'tap'
import { uuidv7Generator, type Person } from '@people-service/domain'
import { createRepositories, type DatabaseHandle } from '@people-service/infra'
import { sql } from 'kysely'
import { postgresDatabase } from '@people-service/infra/testing'

/*
 * Writes that race on PostgreSQL, where requests run at once on a pool of
 * connections (SQLite runs one transaction at a time). Each race here is an
 * ordinary thing for clients to do, and each had answered 500: a deadlock,
 * or a foreign key that a deletion committed under a friendship's insert.
 * Every write either happens or is refused as the domain refuses it, and
 * no friendship is ever left one-sided or pointing at nobody.
 */

const ids = uuidv7Generator()
const person = (name: string): Person =>
  ({ id: ids.next(), name, age: null, email: null, address: null, createdAt: new Date(), updatedAt: new Date(), version: 1 })

/** Friendship rows without their mirror, or pointing at nobody. */
const broken = async ({ db }: DatabaseHandle): Promise<number> => {
  const { rows } = await sql<{ n: string }>`select
    (select count(*) from friendship f where not exists (select 1 from friendship g where g.person_pk = f.friend_pk and g.friend_pk = f.person_pk))
    + (select count(*) from friendship f where not exists (select 1 from person p where p.pk = f.friend_pk)) as n`.execute(db)
  return Number(rows[0]!.n)
}

const failuresOf = (outcomes: Array<PromiseSettledResult<unknown>>): unknown[] =>
  outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected').map((o) => o.reason)

/** The people's integer keys, as stored. */
const pkOf = async ({ db }: DatabaseHandle, someone: Person): Promise<number> =>
  (await db.selectFrom('person').select('pk').where('id', '=', someone.id).executeTakeFirstOrThrow()).pk

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('postgres: a friendship written while another writer takes its rows in the opposite order: the deadlock is broken, and the request still done', async (t) => {
  const handle = await postgresDatabase(t)
  const { people, friendships } = createRepositories(handle)
  const [a, b] = [person('A'), person('B')]
  for (const p of [a, b]) await people.insert(p)
  const [low, high] = [await pkOf(handle, a), await pkOf(handle, b)].sort((x, y) => x - y) as [number, number]
  let adding: Promise<boolean> | undefined
  // The other writer holds (high, low) while the request takes (low, high)
  // and waits for it, then asks for (low, high): PostgreSQL rolls one back.
  const other = handle.db.transaction().execute(async (trx) => {
    await trx.insertInto('friendship').values({ person_pk: high, friend_pk: low }).execute()
    adding = friendships.add(a.id, b.id, new Date())
    await pause(300)
    await trx.insertInto('friendship').values({ person_pk: low, friend_pk: high }).onConflict((c) => c.doNothing()).execute()
  }).then(() => 'committed', (error: unknown) => String(error))
  await other
  await t.resolves(adding!, 'the request is done')
  t.same((await friendships.listFriends(a.id, 10)).map((f) => f.id), [b.id])
  t.same((await friendships.listFriends(b.id, 10)).map((f) => f.id), [a.id])
  t.equal(await broken(handle), 0)
})

t.test('postgres: befriending someone while they are deleted: done, or PERSON_NOT_FOUND, and nothing points at them', async (t) => {
  const handle = await postgresDatabase(t)
  const { people, friendships } = createRepositories(handle)
  const failures: unknown[] = []
  for (let round = 0; round < 8; round++) {
    const [a, b, c] = [person('A'), person('B'), person('C')]
    for (const p of [a, b, c]) await people.insert(p)
    const writes = [
      ...Array.from({ length: 6 }, () => friendships.add(a.id, b.id, new Date())),
      ...Array.from({ length: 6 }, () => friendships.add(c.id, b.id, new Date())),
      people.delete(b.id),
      ...Array.from({ length: 6 }, () => friendships.add(b.id, a.id, new Date()))
    ]
    failures.push(...failuresOf(await Promise.allSettled(writes)))
    t.equal(await people.findById(b.id), undefined)
    t.same(await friendships.listFriends(a.id, 10), [], 'nobody is friends with the deleted')
  }
  t.same(failures.filter((f) => (f as { code?: string }).code !== 'PERSON_NOT_FOUND').map(String), [], `${failures.length} refused, all PERSON_NOT_FOUND`)
  t.equal(await broken(handle), 0)
})

t.test('postgres: two friends deleted at once, each waiting for the other: both go', async (t) => {
  const handle = await postgresDatabase(t)
  const { people, friendships } = createRepositories(handle)
  const [a, b, c] = [person('A'), person('B'), person('C')]
  for (const p of [a, b, c]) await people.insert(p)
  await friendships.add(a.id, b.id, new Date())
  await friendships.add(a.id, c.id, new Date())
  const pks = [await pkOf(handle, a), await pkOf(handle, b)]
  let deleting: Array<Promise<boolean>> = []
  // Held while both deletions start, so that each takes one row of the
  // friendship (the other's mirror, by trigger) and then waits for the
  // other's (by cascade): a deadlock, every time.
  await handle.db.transaction().execute(async (trx) => {
    await sql`select 1 from friendship where person_pk in (${pks[0]}, ${pks[1]}) and friend_pk in (${pks[0]}, ${pks[1]}) for update`.execute(trx)
    deleting = [people.delete(a.id), people.delete(b.id)]
    await pause(300)
  })
  t.same(await Promise.all(deleting), [true, true], 'both deleted, neither refused')
  t.same(await friendships.listFriends(c.id, 10), [], 'their friend has none left')
  t.equal(await broken(handle), 0)
})

t.test('postgres: a friendship ended while one of the two is deleted, each waiting for the other: both done', async (t) => {
  const handle = await postgresDatabase(t)
  const { people, friendships } = createRepositories(handle)
  // The friend first, so its key is the lower: the friendship's statement
  // takes (friend, person) first, the deletion's trigger (person, friend).
  const [friend, someone] = [person('F'), person('E')]
  for (const p of [friend, someone]) await people.insert(p)
  await friendships.add(someone.id, friend.id, new Date())
  const pks = [await pkOf(handle, friend), await pkOf(handle, someone)]
  let racing: Array<Promise<unknown>> = []
  await handle.db.transaction().execute(async (trx) => {
    await sql`select 1 from friendship where person_pk in (${pks[0]}, ${pks[1]}) and friend_pk in (${pks[0]}, ${pks[1]}) for update`.execute(trx)
    racing = [friendships.remove(someone.id, friend.id), people.delete(friend.id)]
    await pause(300)
  })
  const [ended, deleted] = await Promise.all(racing)
  t.type(ended, 'boolean', 'ended (or found gone with the person)')
  t.equal(deleted, true, 'deleted')
  t.same(await friendships.listFriends(someone.id, 10), [])
  t.equal(await broken(handle), 0)
})
