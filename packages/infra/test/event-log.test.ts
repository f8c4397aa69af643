import t, { type Test } from 'tap'
import { createUseCases, type Actor, type ChangeEvent } from '@people-service/domain'
import { createInMemoryPorts } from '@people-service/domain/testing'
import { createDatabase, createRepositories, migrateToLatest, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

const ada: Actor = { kind: 'account', id: '01900000-0000-7000-8000-00000000000a' }
const key: Actor = { kind: 'apiKey', id: '01900000-0000-7000-8000-00000000000b' }

const useCasesOver = (database: DatabaseHandle) => {
  const ports = createInMemoryPorts(createRepositories(database, { eventSource: '/test-source' }))
  return { ports, useCases: createUseCases(ports) }
}

const everyEvent = async ({ changeFeed }: { changeFeed: ReturnType<typeof createRepositories>['changeFeed'] }) =>
  changeFeed.after({ after: 0, limit: 1000 })

const recordsEachChangeOnce = async (t: Test, database: DatabaseHandle) => {
  const { ports, useCases } = useCasesOver(database)
  const grace = await useCases.createPerson(ada, { name: 'Grace' })
  const alan = await useCases.createPerson(key, { name: 'Alan' })
  await useCases.updatePerson(ada, grace.id, { age: 85 })
  const same = await useCases.updatePerson(ada, grace.id, { age: 85 })
  t.equal(same.version, 2, 'an update that changes nothing keeps the version')
  await useCases.befriend(ada, grace.id, alan.id)
  await useCases.befriend(ada, alan.id, grace.id)
  await useCases.sendMessage(key, { personId: grace.id, text: 'hello' })
  await useCases.unfriend(ada, grace.id, alan.id)
  await useCases.unfriend(ada, grace.id, alan.id)
  await useCases.deletePerson(ada, alan.id)
  const events = await everyEvent(ports)
  t.same(events.map((e) => [e.position, e.type, e.actorKind]), [
    [1, 'person.created', 'account'], [2, 'person.created', 'apikey'], [3, 'person.updated', 'account'],
    [4, 'friendship.created', 'account'], [5, 'message.sent', 'apikey'], [6, 'friendship.deleted', 'account'],
    [7, 'person.deleted', 'account']
  ], 'one event per change, none for a change that changed nothing, in order')
  t.match(events[2], { subject: `/person/${grace.id}`, source: '/test-source', actorId: ada.id, data: { id: grace.id, name: 'Grace', age: 85, updatedAt: String } })
  t.notOk('version' in (events[2]?.data ?? {}), 'the data is the person as GET answers it')
  t.same(events[6]?.data, { id: alan.id })
  t.equal(await ports.changeFeed.lastPosition(), 7)
}

const failedWorkLeavesNothing = async (t: Test, database: DatabaseHandle) => {
  const { ports, useCases } = useCasesOver(database)
  const before = await ports.changeFeed.lastPosition()
  const event = (subject: string): ChangeEvent => ({ id: crypto.randomUUID(), type: 'person.updated', subject, time: new Date(), actorKind: 'account', actorId: ada.id, data: { id: subject } })
  await t.rejects(ports.unitOfWork.run(async (tx) => {
    tx.changes.record(event('a'))
    throw new Error('the change fails')
  }), { message: 'the change fails' })
  await t.rejects(useCases.sendMessage(ada, { personId: '01900000-0000-7000-8000-0000000000ff', text: 'to nobody' }), { code: 'PERSON_NOT_FOUND' })
  t.equal(await ports.changeFeed.lastPosition(), before, 'no position was used')
  t.same(await ports.changeFeed.after({ after: before, limit: 10 }), [], 'no event was recorded')
  await ports.unitOfWork.run(async (tx) => { tx.changes.record(event('b')) })
  t.same((await ports.changeFeed.after({ after: before, limit: 10 })).map((e) => [e.position, e.subject]), [[before + 1, 'b']])
}

const filtersAndPrunes = async (t: Test, database: DatabaseHandle) => {
  const { ports, useCases } = useCasesOver(database)
  const start = await ports.changeFeed.lastPosition()
  const people = []
  for (const name of ['A', 'B', 'C', 'D']) people.push(await useCases.createPerson(ada, { name }))
  await useCases.updatePerson(ada, people[1]!.id, { name: 'B2' })
  const feed = ports.changeFeed
  t.same((await feed.after({ after: start, limit: 10, types: ['person.updated'] })).map((e) => e.subject), [`/person/${people[1]!.id}`])
  t.same((await feed.after({ after: start, limit: 10, subject: `/person/${people[1]!.id}` })).map((e) => e.type), ['person.created', 'person.updated'])
  t.same((await feed.after({ after: start, limit: 2 })).map((e) => e.position), [start + 1, start + 2])
  // Everything so far is older than a moment from now: pruned two at a time, a prefix.
  const later = new Date(Date.now() + 60_000)
  t.equal(await feed.pruneBefore(later, 2), 2)
  const pruned = await feed.prunedThrough()
  const left = await feed.after({ after: 0, limit: 1000 })
  t.equal(left[0]?.position, pruned + 1, 'what is left starts right after the pruned mark')
  while (await feed.pruneBefore(later, 2) > 0);
  t.same(await feed.after({ after: 0, limit: 10 }), [])
  t.equal(await feed.prunedThrough(), await feed.lastPosition(), 'everything pruned, and the mark says so')
  await useCases.createPerson(ada, { name: 'E' })
  t.equal((await feed.after({ after: 0, limit: 10 }))[0]?.position, (await feed.prunedThrough()) + 1, 'positions are never given again after pruning')
  t.equal(await feed.pruneBefore(new Date(0), 10), 0, 'nothing older than that')
}

t.test('sqlite: every change records its event once, in order', async (t) => recordsEachChangeOnce(t, await sqliteFile(t)))
t.test('sqlite: failed work leaves no event and uses no position', async (t) => failedWorkLeavesNothing(t, await sqliteFile(t)))
t.test('sqlite: filters, and pruning a prefix at a time', async (t) => filtersAndPrunes(t, await sqliteFile(t)))

t.test('postgres', async (t) => {
  const database = await postgresDatabase(t)
  t.test('every change records its event once, in order', async (t) => { await database.reset(); await recordsEachChangeOnce(t, database) })
  t.test('failed work leaves no event and uses no position', async (t) => { await database.reset(); await failedWorkLeavesNothing(t, database) })
  t.test('filters, and pruning a prefix at a time', async (t) => { await database.reset(); await filtersAndPrunes(t, database) })

  t.test('a reader following positions sees every event once, in order, while transactions commit out of the order they began', async (t) => {
    await database.reset()
    // Two pools, as two instances would have.
    const other = createDatabase({ url: database.url, poolSize: 8 })
    t.teardown(() => other.close())
    await migrateToLatest(other)
    const writers = [createRepositories(database), createRepositories(other)]
    const seen: number[] = []
    let writing = true
    const tail = (async () => {
      let cursor = 0
      for (;;) {
        const done = !writing
        const page = await writers[0]!.changeFeed.after({ after: cursor, limit: 50 })
        for (const e of page) seen.push(e.position)
        cursor = page.at(-1)?.position ?? cursor
        if (done && page.length === 0) return
      }
    })()
    const write = async (n: number) => {
      const { unitOfWork } = writers[n % 2]!
      await unitOfWork.run(async (tx) => {
        tx.changes.record({ id: crypto.randomUUID(), type: 'person.updated', subject: `/person/${n}`, time: new Date(), actorKind: 'account', actorId: ada.id, data: { n } })
        // Work of different lengths: transactions end in another order than they began.
        await new Promise((resolve) => setTimeout(resolve, (n * 7) % 13))
      })
    }
    const lanes = Array.from({ length: 16 }, (_, lane) => (async () => { for (let i = 0; i < 25; i++) await write(lane * 25 + i) })())
    await Promise.all(lanes)
    writing = false
    await tail
    const table = (await writers[1]!.changeFeed.after({ after: 0, limit: 1000 })).map((e) => e.position)
    t.equal(table.length, 400)
    t.same(seen, table, 'the reader saw the table: each event once, in position order')
    t.same(table, Array.from({ length: 400 }, (_, i) => i + 1), 'positions have no gaps')
  })
})
