import {
  IDEMPOTENCY, idempotencyKeyInUse, idempotencyKeyReused, type IdempotentOutcome
} from '../idempotency/idempotency.js'
import type { IdempotencyClaim, IdempotentRequest } from '../idempotency/idempotency.repository.js'
import type { Ports } from '../ports.js'
import type { TransactionPorts } from '../shared/unit-of-work.js'

type IdempotencyPorts = Pick<Ports, 'idempotency' | 'unitOfWork' | 'clock' | 'ids'>

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
 */
export const idempotently = (ports: IdempotencyPorts) => {
  const { idempotency, unitOfWork, clock, ids } = ports
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

  /** Takes the key for `claim`; the stored answer when the request already ran. */
  const claimKey = async (claim: IdempotencyClaim, now: Date): Promise<string | undefined> => {
    const held = await idempotency.claim(claim, now)
    if (held.claimed) return undefined
    const { record } = held
    if (record.fingerprint !== claim.fingerprint) throw idempotencyKeyReused()
    if (record.response !== null) return record.response
    if (record.lockedUntil > now || !await idempotency.takeOver(claim, record.token)) throw idempotencyKeyInUse()
    return undefined
  }

  return async <T>(request: IdempotentRequest, work: (tx: TransactionPorts) => Promise<T>, record: (result: T) => string): Promise<IdempotentOutcome<T>> => {
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
