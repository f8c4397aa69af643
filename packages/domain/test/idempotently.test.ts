import t from 'tap'
import { createUseCases, IDEMPOTENCY, type Clock, type IdempotentRequest, type Person, type StoredResponse } from '@people-service/domain'
import { createInMemoryPorts, inMemoryMessageEvents, SETUP_ACTOR } from '@people-service/domain/testing'

/*
 * The rules of Idempotency-Key, at the use case: what runs, what is answered
 * again, and when a key is free. REST adds only the header and the stored
 * answer (packages/http/test/safe-retries.test.ts).
 */

const settableClock = (): Clock & { advance(ms: number): void } => {
  let now = Date.parse('2026-11-21T10:00:00.000Z')
  return { now: () => new Date(now), advance: (ms) => { now += ms } }
}

const setup = (recordsPerOwner?: number) => {
  const clock = settableClock()
  const events = inMemoryMessageEvents()
  const ports = createInMemoryPorts({ clock, events })
  return { clock, events, ports, useCases: createUseCases(ports, { recordsPerOwner }) }
}

const request = (fields: Partial<IdempotentRequest> = {}): IdempotentRequest =>
  ({ scope: 'caller-1', owner: 'account-1', key: 'key-1', fingerprint: 'create Ada', ...fields })

const responseOf = (body: string): StoredResponse => ({ status: 201, headers: {}, body: Buffer.from(body) })
const record = (person: Person): StoredResponse => responseOf(JSON.stringify({ id: person.id }))

const gate = () => {
  let open = (): void => {}
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { opened, open }
}

t.test('a repeat gets the first answer and runs nothing; another caller\'s same key is another key', async (t) => {
  const { useCases } = setup()
  const first = await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  t.equal(first.replayed, false)
  const id = first.replayed ? '' : first.result.id
  t.same(await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record), { replayed: true, response: responseOf(JSON.stringify({ id })) })
  const other = await useCases.createPersonOnce(SETUP_ACTOR, request({ scope: 'caller-2' }), { name: 'Ada' }, record)
  t.equal(other.replayed, false)
  t.equal((await useCases.listPeople()).items.length, 2, 'one person per caller')
})

t.test('the same key for another request is IDEMPOTENCY_KEY_REUSED, whether the first runs or has answered', async (t) => {
  const { ports, useCases } = setup()
  const held = gate()
  // A transaction ahead of the first run's keeps it running until the gate opens.
  const ahead = ports.unitOfWork.run(async () => { await held.opened })
  const running = useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  await new Promise((resolve) => setImmediate(resolve))
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request({ fingerprint: 'create Grace' }), { name: 'Grace' }, record), { code: 'IDEMPOTENCY_KEY_REUSED' })
  held.open()
  await ahead
  t.equal((await running).replayed, false)
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request({ fingerprint: 'create Grace' }), { name: 'Grace' }, record), { code: 'IDEMPOTENCY_KEY_REUSED' })
  t.same((await useCases.listPeople()).items.map((p) => p.name), ['Ada'])
})

t.test('a repeat while the first runs is IDEMPOTENCY_KEY_IN_USE; once it answers, a repeat gets that answer', async (t) => {
  const { ports, useCases } = setup()
  const held = gate()
  // The first run holds its transaction until the gate opens.
  const slow = ports.unitOfWork.run(async () => { await held.opened })
  const first = useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  await new Promise((resolve) => setImmediate(resolve))
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record), { code: 'IDEMPOTENCY_KEY_IN_USE' })
  held.open()
  await slow
  const answered = await first
  t.equal(answered.replayed, false)
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)).replayed, true)
  t.equal((await useCases.listPeople()).items.length, 1)
})

t.test('a failed run gives its key up: the repeat runs anew', async (t) => {
  const { useCases } = setup()
  const send = { personId: '01a1fe78-fcb4-7000-a350-7afc4e244c67', text: 'hello' }
  const message = (m: { id: string }) => responseOf(m.id)
  await t.rejects(useCases.sendMessageOnce(SETUP_ACTOR, request(), send, message), { code: 'PERSON_NOT_FOUND' })
  await t.rejects(useCases.sendMessageOnce(SETUP_ACTOR, request(), send, message), { code: 'PERSON_NOT_FOUND' }, 'run again, not 409 nor replayed')
})

t.test('a message is stored and announced once, however often it is repeated', async (t) => {
  const { events, useCases } = setup()
  const ada = await useCases.createPerson(SETUP_ACTOR, { name: 'Ada' })
  const send = { personId: ada.id, text: 'hello' }
  const first = await useCases.sendMessageOnce(SETUP_ACTOR, request(), send, (m) => responseOf(m.id))
  const again = await useCases.sendMessageOnce(SETUP_ACTOR, request(), send, (m) => responseOf(m.id))
  t.same(again, { replayed: true, response: responseOf(first.replayed ? '' : first.result.id) })
  t.equal((await useCases.listInbox(ada.id)).items.length, 1)
  t.equal(events.sent.length, 1, 'subscribers heard of it once')
})

t.test('a claim left by a run that died holds its key until its lease passes; then a repeat runs', async (t) => {
  const { clock, ports, useCases } = setup()
  const now = clock.now()
  // What an instance that crashed mid-request leaves behind.
  await ports.idempotency.claim({
    ...request(),
    token: 'dead',
    lockedUntil: new Date(now.getTime() + IDEMPOTENCY.leaseMs),
    expiresAt: new Date(now.getTime() + IDEMPOTENCY.retentionMs)
  }, now)
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record), { code: 'IDEMPOTENCY_KEY_IN_USE' })
  clock.advance(IDEMPOTENCY.leaseMs)
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)).replayed, false, 'taken over and run')
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)).replayed, true)
  t.equal((await useCases.listPeople()).items.length, 1)
})

t.test('a run whose key was taken over meanwhile stores nothing: exactly one person is created', async (t) => {
  const { clock, ports, useCases } = setup()
  const held = gate()
  const ahead = ports.unitOfWork.run(async () => { await held.opened })
  // The first run has claimed its key, and stalls past its lease.
  const first = useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  await new Promise((resolve) => setImmediate(resolve))
  clock.advance(IDEMPOTENCY.leaseMs + 1)
  const second = useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  await new Promise((resolve) => setImmediate(resolve))
  held.open()
  await ahead
  await t.rejects(first, { code: 'IDEMPOTENCY_KEY_IN_USE' }, 'the stalled run lost its key, and undid its work')
  t.equal((await second).replayed, false, 'the run that took the key over created')
  t.equal((await useCases.listPeople()).items.length, 1, 'one person exists')
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)).replayed, true)
})

t.test('a key is remembered for 24 hours, then names a new request', async (t) => {
  const { clock, useCases } = setup()
  await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  clock.advance(IDEMPOTENCY.retentionMs - 1)
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)).replayed, true)
  clock.advance(1)
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request({ fingerprint: 'create Grace' }), { name: 'Grace' }, record)).replayed, false)
  t.same((await useCases.listPeople()).items.map((p) => p.name).sort(), ['Ada', 'Grace'])
})

t.test('deleting the person an answer is about erases it: a repeat is PERSON_NOT_FOUND, runs nothing; the key stays taken', async (t) => {
  const { useCases } = setup()
  const first = await useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record)
  const ada = first.replayed ? '' : first.result.id
  const send = { personId: ada, text: 'hello' }
  await useCases.sendMessageOnce(SETUP_ACTOR, request({ key: 'message', fingerprint: 'send' }), send, (m) => responseOf(m.id))
  await useCases.deletePerson(SETUP_ACTOR, ada)
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request(), { name: 'Ada' }, record), { code: 'PERSON_NOT_FOUND', message: new RegExp(ada) })
  await t.rejects(useCases.sendMessageOnce(SETUP_ACTOR, request({ key: 'message', fingerprint: 'send' }), send, (m) => responseOf(m.id)), { code: 'PERSON_NOT_FOUND' })
  t.equal((await useCases.listPeople()).items.length, 0, 'nobody made anew')
  await t.rejects(useCases.createPersonOnce(SETUP_ACTOR, request({ fingerprint: 'create Grace' }), { name: 'Grace' }, record), { code: 'IDEMPOTENCY_KEY_REUSED' }, 'another request with the key is still refused')
})

t.test('an account holds at most its allowance of keys, through all its callers; repeats are still answered; a key frees a place as it expires', async (t) => {
  const { clock, useCases } = setup(3)
  for (const [scope, key] of [['caller-1', 'a'], ['key-of-1', 'b'], ['caller-1', 'c']]) {
    t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request({ scope, key }), { name: 'Ada' }, record)).replayed, false)
    clock.advance(60_000)
  }
  const refused = useCases.createPersonOnce(SETUP_ACTOR, request({ scope: 'key-of-1', key: 'd' }), { name: 'Ada' }, record)
  await t.rejects(refused, { code: 'TOO_MANY_IDEMPOTENCY_KEYS', retryAfterSeconds: IDEMPOTENCY.retentionMs / 1000 - 180 })
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request({ scope: 'caller-1', key: 'a' }), { name: 'Ada' }, record)).replayed, true, 'a repeat is answered')
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request({ owner: 'account-2', key: 'd' }), { name: 'Ada' }, record)).replayed, false, 'another account has its own')
  t.equal((await useCases.listPeople()).items.length, 4, 'the refused request made nobody')
  clock.advance(IDEMPOTENCY.retentionMs - 180_000)
  t.equal((await useCases.createPersonOnce(SETUP_ACTOR, request({ scope: 'key-of-1', key: 'd' }), { name: 'Ada' }, record)).replayed, false, 'the oldest expired: a place is free')
})
