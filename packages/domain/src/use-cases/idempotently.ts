import { personNotFound } from '../errors.js'
import {
  IDEMPOTENCY, IdempotencyAllowanceSpent, idempotencyKeyInUse, idempotencyKeyReused, type IdempotentOutcome
} from '../idempotency/idempotency.js'
import type { IdempotencyClaim, IdempotentAnswer, IdempotentRequest, StoredResponse } from '../idempotency/idempotency.repository.js'
import type { Ports } from '../ports.js'
import type { TransactionPorts } from '../shared/unit-of-work.js'

type IdempotencyPorts = Pick<Ports, 'idempotency' | 'unitOfWork' | 'clock' | 'ids'>

export interface IdempotencyOptions {
  /** Records one account may hold at once (IDEMPOTENCY_KEYS_PER_DAY); undefined: IDEMPOTENCY.defaultRecordsPerOwner. */
  recordsPerOwner?: number | undefined
}

/**
 * Runs `work` once per (caller, key), however often the request is repeated
 * (the IETF draft "The Idempotency-Key HTTP Header Field"):
 *
 * 1. The key is claimed in a write of its own, visible to every instance at
 *    once: a repeat while the first runs is IDEMPOTENCY_KEY_IN_USE, a repeat
 *    with another request IDEMPOTENCY_KEY_REUSED, a repeat after the first
 *    answered gets that answer back (`replayed`).
 * 2. The work and the answer (`record(result)`, opaque here) commit in one
 *    transaction: a crash leaves either both or neither, never a created row
 *    without its record. The answer is stored only while the claim still
 *    holds the key, so a run that lost it undoes its work.
 * 3. A failed run gives the key up: a repeat runs anew. A claim left by a
 *    run that died is taken over once its lease has passed.
 * 4. A new key counts against its account's allowance of live records; past
 *    it the request is refused before it runs (a repeat of a key already
 *    held is answered as ever).
 * 5. An answer erased with the person it holds (the person was deleted)
 *    is never replayed: a repeat learns that the person is gone (404).
 */
export const idempotently = (ports: IdempotencyPorts, options: IdempotencyOptions = {}) => {
  const { idempotency, unitOfWork, clock, ids } = ports
  const allowance = options.recordsPerOwner ?? IDEMPOTENCY.defaultRecordsPerOwner
  let nextPruneAt = 0
  let recordedSincePrune = 0

  // Expired records go a bounded batch at a time, through the index on
  // expiry, off the request's own path: nothing waits for it, and a failure
  // only leaves them for the next round. A round is due by time or by the
  // records made since the last (IDEMPOTENCY.pruneBatch).
  const pruneWhenDue = (now: Date): void => {
    recordedSincePrune++
    if (now.getTime() < nextPruneAt && recordedSincePrune < IDEMPOTENCY.pruneBatch / 2) return
    nextPruneAt = now.getTime() + IDEMPOTENCY.pruneEveryMs
    recordedSincePrune = 0
    idempotency.pruneExpired(now, IDEMPOTENCY.pruneBatch).catch(() => {})
  }

  /** Refuses a new key past its account's allowance, giving the key up again. */
  const withinAllowance = async (claim: IdempotencyClaim, now: Date): Promise<void> => {
    const { count, firstExpiry } = await idempotency.liveRecordsOf(claim.owner, now, allowance + 1)
    if (count <= allowance) return
    await idempotency.release(claim.scope, claim.key, claim.token)
    const waitMs = (firstExpiry ?? claim.expiresAt).getTime() - now.getTime()
    throw new IdempotencyAllowanceSpent(allowance, Math.max(1, Math.ceil(waitMs / 1000)))
  }

  /** Takes the key for `claim`; the stored answer when the request already ran. */
  const claimKey = async (claim: IdempotencyClaim, now: Date): Promise<StoredResponse | undefined> => {
    const held = await idempotency.claim(claim, now)
    if (held.claimed) {
      await withinAllowance(claim, now)
      return undefined
    }
    const { record } = held
    if (record.fingerprint !== claim.fingerprint) throw idempotencyKeyReused()
    if (record.erased) throw personNotFound(record.subject ?? '')
    if (record.response !== null) return record.response
    if (record.lockedUntil > now || !await idempotency.takeOver(claim, record.token)) throw idempotencyKeyInUse()
    return undefined
  }

  return async <T>(request: IdempotentRequest, work: (tx: TransactionPorts) => Promise<T>, record: (result: T) => IdempotentAnswer): Promise<IdempotentOutcome<T>> => {
    const now = clock.now()
    const claim: IdempotencyClaim = {
      ...request,
      token: ids.next(),
      lockedUntil: new Date(now.getTime() + IDEMPOTENCY.leaseMs),
      expiresAt: new Date(now.getTime() + IDEMPOTENCY.retentionMs)
    }
    const stored = await claimKey(claim, now)
    if (stored !== undefined) return { replayed: true, response: stored }
    pruneWhenDue(now)
    try {
      const result = await unitOfWork.run(async (tx) => {
        const result = await work(tx)
        if (!await tx.idempotency.complete(claim.scope, claim.key, claim.token, record(result))) throw idempotencyKeyInUse()
        return result
      })
      return { replayed: false, result }
    } catch (error) {
      // Best effort: when it fails too (the database is away), the lease
      // frees the key instead.
      await idempotency.release(claim.scope, claim.key, claim.token).catch(() => {})
      throw error
    }
  }
}
