import t, { type Test } from 'tap'
import { createUseCases, IDEMPOTENCY, type Clock } from '@people-service/domain'
import { createInMemoryPorts, SETUP_ACTOR } from '@people-service/domain/testing'
import { createRepositories, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase } from '@people-service/infra/testing'
import { sqliteFile } from './helper.js'

/*
 * Expired idempotency records are deleted as keyed requests come, a bounded
 * batch at a time, once a minute per instance and once every half batch of
 * keyed requests, off the request's own path: the table holds about a day of
 * keys, not every key ever sent, however fast they come.
 */

const settableClock = (): Clock & { advance(ms: number): void } => {
  let now = Date.parse('2026-11-21T10:00:00.000Z')
  return { now: () => new Date(now), advance: (ms) => { now += ms } }
}

const keysStored = async ({ db }: DatabaseHandle): Promise<string[]> =>
  (await db.selectFrom('idempotency_key').select('key').orderBy('key').execute()).map((row) => row.key)

const eventually = async (check: () => Promise<boolean>): Promise<boolean> => {
  for (let i = 0; i < 100; i++) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return false
}

const prunesExpired = async (t: Test, database: DatabaseHandle) => {
  const clock = settableClock()
  const useCases = createUseCases(createInMemoryPorts({ ...createRepositories(database), clock }))
  const create = (key: string) => useCases.createPersonOnce(SETUP_ACTOR, { scope: 'caller', owner: 'account', key, fingerprint: key }, { name: key }, (p) => ({ status: 201, headers: {}, body: Buffer.from(p.id) }))
  for (const key of ['a', 'b', 'c']) await create(key)
  t.same(await keysStored(database), ['a', 'b', 'c'])
  clock.advance(IDEMPOTENCY.retentionMs)
  await create('d')
  t.ok(await eventually(async () => (await keysStored(database)).length === 1), 'the expired records went')
  t.same(await keysStored(database), ['d'])
  // A round finds nothing expired yet; 'd' expires a moment later, and waits
  // for the next round, a minute on.
  clock.advance(IDEMPOTENCY.retentionMs - 1)
  await create('e')
  clock.advance(1)
  await create('f')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.same(await keysStored(database), ['d', 'e', 'f'], 'no round on every request')
  clock.advance(IDEMPOTENCY.pruneEveryMs)
  await create('g')
  t.ok(await eventually(async () => !(await keysStored(database)).includes('d')), 'the next round, a minute on')
  t.same(await keysStored(database), ['e', 'f', 'g'])
}

const oldKeysLeft = async (database: DatabaseHandle): Promise<number> =>
  (await keysStored(database)).filter((key) => key.startsWith('old-')).length

const keepsPaceWithAFlood = async (t: Test, database: DatabaseHandle) => {
  const clock = settableClock()
  const useCases = createUseCases(createInMemoryPorts({ ...createRepositories(database), clock }))
  const create = (key: string) => useCases.createPersonOnce(SETUP_ACTOR, { scope: 'caller', owner: 'account', key, fingerprint: key }, { name: 'Ada' }, (p) => ({ status: 201, headers: {}, body: Buffer.from(p.id) }))
  const expired = 2 * IDEMPOTENCY.pruneBatch + 200
  for (let i = 0; i < expired; i++) await create(`old-${i}`)
  clock.advance(IDEMPOTENCY.retentionMs)
  // All within one minute: the first is due a round by time, and half a batch of records later another is due by count.
  const flood = IDEMPOTENCY.pruneBatch / 2 + 1
  for (let i = 0; i < flood; i++) await create(`new-${i}`)
  t.ok(await eventually(async () => await oldKeysLeft(database) === 200), 'two rounds of a batch each went, not one')
  await new Promise((resolve) => setTimeout(resolve, 200))
  t.equal(await oldKeysLeft(database), 200, 'and no more: each round is a bounded batch')
  t.equal((await keysStored(database)).length - 200, flood, 'the new keys are all there')
}

t.test('sqlite: a flood of keyed creates cannot outgrow the pruning', async (t) => {
  await keepsPaceWithAFlood(t, await sqliteFile(t))
})

t.test('postgres: a flood of keyed creates cannot outgrow the pruning', async (t) => {
  await keepsPaceWithAFlood(t, await postgresDatabase(t))
})

t.test('sqlite: expired idempotency records are pruned as keyed requests come', async (t) => {
  await prunesExpired(t, await sqliteFile(t))
})

t.test('postgres: expired idempotency records are pruned as keyed requests come', async (t) => {
  await prunesExpired(t, await postgresDatabase(t))
})
