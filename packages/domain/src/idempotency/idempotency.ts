import type { StoredResponse } from './idempotency.repository.js'
import { DomainError } from '../errors.js'

export const IDEMPOTENCY = {
  /** How long a key is remembered after its first request (the IETF draft suggests 24 hours). */
  retentionMs: 24 * 60 * 60 * 1000,
  /**
   * How long a first request holds its key before a repeat may take it over:
   * past the longest a request can run (the HTTP server's 30 s), so a repeat
   * takes over only from a request that died (an instance that crashed).
   */
  leaseMs: 60_000,
  /**
   * Expired records are deleted this many at a time, in a round once a
   * minute per instance and another every `pruneBatch / 2` keyed requests:
   * an instance deletes at least twice as fast as it records, so a flood of
   * keyed creates (one editor's budget makes 1.44 million a day) cannot
   * outgrow the rounds. A round runs on the event loop on SQLite: 500
   * records of 40 KB answers (a message of 10,000 emoji) took 40–44 ms,
   * 50 take 5–6 ms.
   */
  pruneEveryMs: 60_000,
  pruneBatch: 50,
  /**
   * Records one account may hold at once, so over any 24 hours
   * (IDEMPOTENCY_KEYS_PER_DAY): its keys bound what it can make the
   * service keep, whatever its request budget (1.44 million a day by
   * default). A record of the largest message is at most about 40 KB.
   */
  defaultRecordsPerOwner: 10_000
} as const

export const idempotencyKeyReused = (): DomainError =>
  new DomainError('IDEMPOTENCY_KEY_REUSED', 'this Idempotency-Key was used for another request; use a new key for a new request')

export const idempotencyKeyInUse = (): DomainError =>
  new DomainError('IDEMPOTENCY_KEY_IN_USE', 'the first request with this Idempotency-Key is still running; repeat it once that one has answered')

/** Past an account's allowance of records: refused before it runs, until its oldest record expires. */
export class IdempotencyAllowanceSpent extends DomainError {
  /** Whole seconds until a record of the account expires and frees a place. */
  readonly retryAfterSeconds: number

  constructor (allowance: number, retryAfterSeconds: number) {
    super('TOO_MANY_IDEMPOTENCY_KEYS', `an account may hold at most ${allowance} Idempotency-Keys within 24 hours; retry in ${retryAfterSeconds} s, or send this request without a key`)
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/** What an idempotent run answers: its own result, or the first run's stored answer. */
export type IdempotentOutcome<T> = { replayed: false, result: T } | { replayed: true, response: StoredResponse }
