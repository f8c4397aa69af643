import assert from 'node:assert/strict'
import type { IdempotencyClaim, IdempotentAnswer, StoredResponse } from '../idempotency/idempotency.repository.js'
import type { Person } from '../person/person.js'
import { uuidv7Generator } from '../shared/ids.js'
import type { ContractCase } from './repository-contract.js'

/* What every store of idempotency records, and its unit of work, must do. */

const ids = uuidv7Generator()
const T0 = Date.parse('2026-03-01T00:00:00.000Z')
const at = (ms: number): Date => new Date(T0 + ms)

const claimOf = (fields: Partial<IdempotencyClaim> = {}): IdempotencyClaim => ({
  scope: ids.next(),
  owner: 'an account',
  key: `key-${ids.next()}`,
  fingerprint: 'fingerprint-1',
  token: ids.next(),
  lockedUntil: at(60_000),
  expiresAt: at(86_400_000),
  ...fields
})

const responseOf = (text: string): StoredResponse => ({ status: 201, headers: { location: '/person/x' }, body: Buffer.from(text) })
/** An answer about `subject` (by default nobody stored). */
const answerOf = (text: string, subject = ids.next()): IdempotentAnswer => ({ subject, response: responseOf(text) })
/** A stored response as read back: its body as plain bytes. */
const bodyText = (response: StoredResponse | null): string | undefined => response === null ? undefined : Buffer.from(response.body).toString('utf8')

const personNamed = (name: string): Person =>
  ({ id: ids.next(), name, age: null, email: null, address: null, createdAt: at(0), updatedAt: at(0), version: 1 })

export const idempotencyContract: ContractCase[] = [
  {
    name: 'idempotency: a claim holds its key for its caller; a second claim reads the record, answered once completed',
    async run ({ idempotency }) {
      const first = claimOf()
      assert.deepEqual(await idempotency.claim(first, at(0)), { claimed: true })
      const again = claimOf({ scope: first.scope, key: first.key, fingerprint: 'fingerprint-2' })
      const record = { fingerprint: 'fingerprint-1', token: first.token, response: null, subject: null, erased: false, lockedUntil: first.lockedUntil, expiresAt: first.expiresAt }
      assert.deepEqual(await idempotency.claim(again, at(1)), { claimed: false, record })
      assert.deepEqual(await idempotency.claim(claimOf({ key: first.key }), at(1)), { claimed: true }, 'the same key of another caller is another key')
      assert.equal(await idempotency.complete(first.scope, first.key, again.token, answerOf('not theirs')), false)
      // Characters JSON escapes, and text that does not compress, come back byte for byte.
      const body = `{"text":"${'\\"'.repeat(500)}${ids.next()}🦄\\n"}`
      const answer = answerOf(body, 'the subject')
      assert.equal(await idempotency.complete(first.scope, first.key, first.token, answer), true)
      const read = await idempotency.claim(again, at(2))
      assert.ok(!read.claimed)
      assert.deepEqual({ ...read.record, response: null }, { ...record, subject: 'the subject' })
      assert.equal(read.record.response?.status, 201)
      assert.deepEqual(read.record.response?.headers, { location: '/person/x' })
      assert.equal(bodyText(read.record.response), body)
    }
  },
  {
    name: 'idempotency: of concurrent claims of one key exactly one holds it',
    async run ({ idempotency }) {
      const first = claimOf()
      const claims = Array.from({ length: 6 }, () => claimOf({ scope: first.scope, key: first.key }))
      const results = await Promise.all(claims.map((claim) => idempotency.claim(claim, at(0))))
      assert.equal(results.filter((result) => result.claimed).length, 1)
      const winner = claims[results.findIndex((result) => result.claimed)]!
      for (const result of results) if (!result.claimed) assert.equal(result.record.token, winner.token)
    }
  },
  {
    name: 'idempotency: takeOver moves only an unanswered record from the token named; release drops only its own',
    async run ({ idempotency }) {
      const first = claimOf()
      await idempotency.claim(first, at(0))
      const second = claimOf({ scope: first.scope, key: first.key, lockedUntil: at(120_000) })
      const third = claimOf({ scope: first.scope, key: first.key })
      assert.equal(await idempotency.takeOver(second, first.token), true)
      assert.equal(await idempotency.takeOver(third, first.token), false, 'the first token holds it no more')
      assert.equal(await idempotency.complete(first.scope, first.key, first.token, answerOf('late')), false, 'nor can it answer')
      await idempotency.release(first.scope, first.key, first.token)
      const read = await idempotency.claim(third, at(1))
      assert.ok(!read.claimed && read.record.token === second.token && read.record.lockedUntil.getTime() === at(120_000).getTime())
      await idempotency.release(second.scope, second.key, second.token)
      assert.deepEqual(await idempotency.claim(third, at(2)), { claimed: true }, 'released: the key is free')
      await idempotency.complete(third.scope, third.key, third.token, answerOf('answer'))
      await idempotency.release(third.scope, third.key, third.token)
      assert.equal(await idempotency.takeOver(claimOf({ scope: third.scope, key: third.key }), third.token), false, 'an answered record is never taken over')
      const kept = await idempotency.claim(claimOf({ scope: third.scope, key: third.key }), at(3))
      assert.ok(!kept.claimed && bodyText(kept.record.response) === 'answer', 'nor released')
    }
  },
  {
    name: 'idempotency: an expired record counts as none, and expired records are pruned a bounded batch at a time',
    async run ({ idempotency }) {
      const old = claimOf({ expiresAt: at(1000) })
      await idempotency.claim(old, at(0))
      await idempotency.complete(old.scope, old.key, old.token, answerOf('old answer'))
      const fresh = claimOf({ scope: old.scope, key: old.key, fingerprint: 'another request', expiresAt: at(90_000) })
      assert.deepEqual(await idempotency.claim(fresh, at(1000)), { claimed: true }, 'expired at its expiry')
      const read = await idempotency.claim(claimOf({ scope: old.scope, key: old.key }), at(1001))
      assert.ok(!read.claimed && read.record.fingerprint === 'another request' && read.record.response === null)

      const scope = ids.next()
      for (let i = 1; i <= 5; i++) await idempotency.claim(claimOf({ scope, key: `k${i}`, expiresAt: at(i * 10_000) }), at(0))
      // Records expired by 45 s: k1..k4 (and none of the fresh one's).
      assert.equal(await idempotency.pruneExpired(at(45_000), 3), 3)
      assert.equal(await idempotency.pruneExpired(at(45_000), 3), 1)
      assert.equal(await idempotency.pruneExpired(at(45_000), 3), 0)
      const survivor = await idempotency.claim(claimOf({ scope, key: 'k5' }), at(45_000))
      assert.equal(survivor.claimed, false, 'what has not expired stays')
    }
  },
  {
    name: 'idempotency: deleting a person erases the answers about them, keeping the record (erased); other answers stay',
    async run ({ idempotency, people }) {
      const ada = personNamed('Ada')
      const grace = personNamed('Grace')
      await people.insert(ada)
      await people.insert(grace)
      const claims = [claimOf(), claimOf(), claimOf()]
      for (const claim of claims) await idempotency.claim(claim, at(0))
      await idempotency.complete(claims[0]!.scope, claims[0]!.key, claims[0]!.token, answerOf('{"name":"Ada"}', ada.id))
      await idempotency.complete(claims[1]!.scope, claims[1]!.key, claims[1]!.token, answerOf('{"text":"to Ada"}', ada.id))
      await idempotency.complete(claims[2]!.scope, claims[2]!.key, claims[2]!.token, answerOf('{"name":"Grace"}', grace.id))
      assert.equal(await people.delete(ada.id), true)
      const repeat = (claim: IdempotencyClaim) => idempotency.claim(claimOf({ scope: claim.scope, key: claim.key }), at(1))
      for (const claim of claims.slice(0, 2)) {
        const read = await repeat(claim)
        assert.ok(!read.claimed, 'the key stays held')
        assert.deepEqual([read.record.response, read.record.erased, read.record.subject], [null, true, ada.id], 'the answer is gone, the record says so')
        assert.equal(await idempotency.takeOver(claimOf({ scope: claim.scope, key: claim.key }), claim.token), false, 'an erased record is never taken over')
        await idempotency.release(claim.scope, claim.key, claim.token)
        assert.equal((await repeat(claim)).claimed, false, 'nor released')
      }
      const kept = await repeat(claims[2]!)
      assert.ok(!kept.claimed && !kept.record.erased && bodyText(kept.record.response) === '{"name":"Grace"}', 'another person\'s answer stays')
    }
  },
  {
    name: 'idempotency: the live records of an owner are counted up to a bound, with the first to expire',
    async run ({ idempotency }) {
      const owner = ids.next()
      assert.deepEqual(await idempotency.liveRecordsOf(owner, at(0), 3), { count: 0, firstExpiry: undefined })
      for (let i = 1; i <= 5; i++) await idempotency.claim(claimOf({ owner, scope: i % 2 === 0 ? 'key-a' : 'key-b', expiresAt: at(i * 10_000) }), at(0))
      await idempotency.claim(claimOf({ owner: 'someone else' }), at(0))
      assert.deepEqual(await idempotency.liveRecordsOf(owner, at(0), 10), { count: 5, firstExpiry: undefined }, 'every caller of the account counts, no one else')
      assert.deepEqual(await idempotency.liveRecordsOf(owner, at(0), 5), { count: 5, firstExpiry: at(10_000) }, 'at the bound: the first to expire')
      assert.deepEqual(await idempotency.liveRecordsOf(owner, at(0), 2), { count: 2, firstExpiry: at(10_000) }, 'counted no further than asked')
      assert.deepEqual(await idempotency.liveRecordsOf(owner, at(25_000), 3), { count: 3, firstExpiry: at(30_000) }, 'expired records do not count')
    }
  },
  {
    name: 'unit of work: its writes commit together, or none of them when the work throws',
    async run ({ unitOfWork, people, messages, idempotency }) {
      const kept = personNamed('Kept')
      const claim = claimOf()
      await idempotency.claim(claim, at(0))
      await unitOfWork.run(async (tx) => {
        await tx.people.insert(kept)
        await tx.messages.insert({ id: ids.next(), personId: kept.id, text: 'hello', senderId: 's', sentAt: at(1) })
        assert.equal(await tx.idempotency.complete(claim.scope, claim.key, claim.token, answerOf('done')), true)
      })
      assert.deepEqual(await people.findById(kept.id), kept)
      assert.equal((await messages.listForPerson(kept.id, { limit: 10 })).length, 1)

      const lost = personNamed('Lost')
      const other = claimOf()
      const failure = new Error('the work failed')
      await assert.rejects(unitOfWork.run(async (tx) => {
        await tx.people.insert(lost)
        await tx.messages.insert({ id: ids.next(), personId: kept.id, text: 'lost', senderId: 's', sentAt: at(2) })
        await tx.idempotency.claim(other, at(0))
        const changed = { ...kept, name: 'Changed', version: 2 }
        assert.equal(await tx.people.update(changed, 1), true)
        throw failure
      }), failure)
      assert.equal(await people.findById(lost.id), undefined)
      assert.deepEqual(await people.findById(kept.id), kept, 'the update went with the rest')
      assert.equal((await messages.listForPerson(kept.id, { limit: 10 })).length, 1)
      assert.deepEqual(await idempotency.claim(other, at(0)), { claimed: true }, 'the claim made inside went too')
      assert.equal(await unitOfWork.run(async () => 42), 42, 'the work answers through run')
    }
  }
]
