import t, { type Test } from 'tap'
import { uuidv7Generator, type Person } from '@people-service/domain'
import { createRepositories, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { sql } from 'kysely'
import { personDeletion } from '../src/person/person-deletion.js'
import { sqliteFile, turnsDuring } from './helper.js'

/*
 * Deleting a person with very many messages or friends goes a step at a
 * time on SQLite (src/person/person-deletion.ts). Here a step is 3 messages
 * and 4 friends, so that a person with 10 messages and 9 friends crosses
 * every boundary: everything of theirs goes and nothing of anyone else's,
 * no friendship is ever left one-sided, the caller is asked before each
 * step after the first and can stop it, and deleting again finishes it.
 */

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: postgresDatabase
}

const STEPS = { messageRows: 3, friendRows: 4 }
const MESSAGES = 10
const FRIENDS = 9
/** The steps after the first, and the last statement: a step is whole while either part fills it. */
const ASKED = Math.floor(Math.max(MESSAGES / STEPS.messageRows, FRIENDS / STEPS.friendRows)) + 1

const ids = uuidv7Generator()
const at = () => new Date()
const person = (name: string): Person =>
  ({ id: ids.next(), name, age: null, email: null, address: null, createdAt: at(), updatedAt: at(), version: 1 })

/** A victim with MESSAGES messages and FRIENDS friends, and a bystander with a friend and a message of their own. */
const world = async (handle: DatabaseHandle) => {
  const { people, friendships, messages } = createRepositories(handle)
  const victim = person('Victim')
  const bystander = person('Bystander')
  const friends = Array.from({ length: FRIENDS }, (_, i) => person(`Friend ${i}`))
  for (const p of [victim, bystander, ...friends]) await people.insert(p)
  for (const friend of friends) await friendships.add(victim.id, friend.id, at())
  await friendships.add(bystander.id, friends[0]!.id, at())
  for (let i = 0; i < MESSAGES; i++) await messages.insert({ id: ids.next(), personId: victim.id, text: `to the victim ${i}`, senderId: 'sender', sentAt: at() })
  const kept = { id: ids.next(), personId: bystander.id, text: 'to the bystander', senderId: 'sender', sentAt: at() }
  await messages.insert(kept)

  /** What is left of the victim, and whether every friendship row has its mirror. */
  const left = async () => {
    const { rows: [counts] } = await sql<{ messages: number, friendships: number, oneSided: number }>`
      select
        (select count(*) from message join person on person.pk = message.person_pk where person.id = ${victim.id}) as messages,
        (select count(*) from friendship join person on person.pk = friendship.person_pk where person.id = ${victim.id}) as friendships,
        (select count(*) from friendship f where not exists
          (select 1 from friendship m where m.person_pk = f.friend_pk and m.friend_pk = f.person_pk)) as "oneSided"`.execute(handle.db)
    return { person: (await people.findById(victim.id)) !== undefined, messages: Number(counts!.messages), friendships: Number(counts!.friendships), oneSided: Number(counts!.oneSided) }
  }
  /** Everyone else's friendships and messages are as they were. */
  const othersIntact = async (t: Test) => {
    t.same(await friendships.listFriends(bystander.id, 10), [{ id: friends[0]!.id, name: friends[0]!.name }], "the bystander's friendship stays")
    t.same((await friendships.listFriends(friends[0]!.id, 10)).map((f) => f.id), [bystander.id], 'the friend keeps the bystander, not the victim')
    for (const friend of friends.slice(1)) t.same(await friendships.listFriends(friend.id, 10), [], `${friend.name} no longer has the victim`)
    t.same(await messages.findById(kept.id), kept, "the bystander's message stays")
  }
  return { victim, people, left, othersIntact }
}

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: deleting a person takes their messages and friendships and nothing else`, async (t) => {
    const handle = await open(t)
    const { victim, left, othersIntact } = await world(handle)
    const remove = personDeletion(handle.db, handle.dialect, STEPS)
    t.same(await left(), { person: true, messages: MESSAGES, friendships: FRIENDS, oneSided: 0 })

    let asked = 0
    t.equal(await remove(victim.id, undefined, async () => { asked++ }), true)
    t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
    await othersIntact(t)
    // PostgreSQL deletes in one statement, off the event loop: nothing to ask.
    t.equal(asked, handle.dialect === 'sqlite' ? ASKED : 0, 'asked before each step after the first and before the last statement')
    t.equal(await remove(victim.id), false, 'a second time: nobody to delete')
  })

  t.test(`${store}: a stale version deletes nothing, the current one everything`, async (t) => {
    const handle = await open(t)
    const { victim, left } = await world(handle)
    const remove = personDeletion(handle.db, handle.dialect, STEPS)
    t.equal(await remove(victim.id, 2), false)
    t.same(await left(), { person: true, messages: MESSAGES, friendships: FRIENDS, oneSided: 0 }, 'not a message or friendship went')
    t.equal(await remove(victim.id, 1), true)
    t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
  })
}

t.test('sqlite file: a deletion the caller stops leaves the person with fewer messages and friends, none one-sided; deleting again finishes it', async (t) => {
  const handle = await sqliteFile(t)
  const { victim, left, othersIntact } = await world(handle)
  const remove = personDeletion(handle.db, handle.dialect, STEPS)
  const stop = new Error('stopped')
  let asked = 0
  await t.rejects(remove(victim.id, 1, async () => { if (++asked === 2) throw stop }), stop)
  t.same(await left(), { person: true, messages: MESSAGES - 2 * STEPS.messageRows, friendships: FRIENDS - 2 * STEPS.friendRows, oneSided: 0 },
    'two steps went, the person is still there')
  t.equal(await remove(victim.id), true)
  t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
  await othersIntact(t)
})

t.test('sqlite file: once the first step has run, a write conditional on the version before fails, and a change in between does not stop the deletion', async (t) => {
  const handle = await sqliteFile(t)
  const { victim, people, left } = await world(handle)
  const remove = personDeletion(handle.db, handle.dialect, STEPS)
  let changed = false
  const changeOnce = async () => {
    if (changed) return
    changed = true
    // The If-Match the deletion itself was given: it had succeeded, and both answered 200.
    t.equal(await people.update({ ...victim, name: 'Renamed', version: 2 }, 1), false, 'an edit of the version the deletion was made against fails')
    t.equal(await people.update({ ...victim, name: 'Renamed', version: 3 }, 2), true, 'an edit of the current version is made')
  }
  t.equal(await remove(victim.id, 1, changeOnce), true)
  t.ok(changed)
  t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
})

t.test('sqlite file: a person with less than a step goes in one statement, without asking', async (t) => {
  const handle = await sqliteFile(t)
  const { victim, left } = await world(handle)
  const remove = personDeletion(handle.db, handle.dialect, { messageRows: MESSAGES + 1, friendRows: FRIENDS + 1 })
  let asked = 0
  t.equal(await remove(victim.id, undefined, async () => { asked++ }), true)
  t.equal(asked, 0)
  t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
})

t.test('sqlite file: without a caller to ask, other callbacks run between steps', async (t) => {
  const handle = await sqliteFile(t)
  const { victim, left } = await world(handle)
  const remove = personDeletion(handle.db, handle.dialect, STEPS)
  const { result, turns } = await turnsDuring(() => remove(victim.id))
  t.equal(result, true)
  t.ok(turns >= ASKED, `another callback ran between every two steps (${turns} times, ${ASKED + 1} steps)`)
  t.same(await left(), { person: false, messages: 0, friendships: 0, oneSided: 0 })
})
