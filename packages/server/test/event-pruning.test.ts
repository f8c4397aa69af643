import t from 'tap'
import { createUseCases, type Clock } from '@people-service/domain'
import { createInMemoryPorts, SETUP_ACTOR } from '@people-service/domain/testing'
import { createDatabase, createRepositories, migrateToLatest } from '@people-service/infra'
import { startEventPruning } from '../src/event-pruning.js'
import { tempDatabaseUrl } from './helper.js'

t.test('events older than the retention go in the background, a batch at a time; younger ones stay', async (t) => {
  const handle = createDatabase({ url: tempDatabaseUrl(t) })
  t.teardown(() => handle.close())
  await migrateToLatest(handle)
  let now = new Date('2026-12-01T00:00:00.000Z')
  const clock: Clock = { now: () => now }
  const ports = createInMemoryPorts({ ...createRepositories(handle), clock })
  const useCases = createUseCases(ports)
  for (let i = 0; i < 7; i++) await useCases.createPerson(SETUP_ACTOR, { name: `old ${i}` })
  now = new Date('2026-12-20T00:00:00.000Z')
  const young = await useCases.createPerson(SETUP_ACTOR, { name: 'young' })
  // 30 days after the first ones, 11 after the young one: a retention of 30 days keeps only it.
  now = new Date('2026-12-31T00:00:01.000Z')
  const batches: number[] = []
  const feed = { pruneBefore: async (before: Date, limit: number) => { const n = await ports.changeFeed.pruneBefore(before, limit); batches.push(n); return n } }
  const errors: unknown[] = []
  const pruning = startEventPruning({ feed, clock, retentionDays: 30, batch: 3, everyMs: 20, onError: (error) => errors.push(error) })
  t.teardown(() => pruning.stop())
  while (batches.length < 4) await new Promise((resolve) => setTimeout(resolve, 10))
  await pruning.stop()
  t.same(batches.slice(0, 3), [3, 3, 1], 'batches of 3 until one comes back short')
  t.same((await ports.changeFeed.after({ after: 0, limit: 10 })).map((e) => e.subject), [`/person/${young.id}`], 'the young event stays')
  t.equal(await ports.changeFeed.prunedThrough(), 7)
  t.same(errors, [])
})
