/** A request a client may repeat, as the service tells one from another. */
export interface IdempotentRequest {
  /** Whose key it is (the caller): keys of different callers never meet. */
  scope: string
  /** The client's Idempotency-Key. */
  key: string
  /** A digest of what was asked (operation and body): the same key for another request is refused. */
  fingerprint: string
  /** The account the caller acts for (a key: its owner): whose daily allowance of records the key takes. */
  owner: string
}

/** One request's hold on a key: the record, as written when the request starts. */
export interface IdempotencyClaim extends IdempotentRequest {
  /** Made anew by each claim: only its holder may complete or release the record. */
  token: string
  /** Until then the holder is presumed running; after it, a repeat may take the key over. */
  lockedUntil: Date
  /** When the record is forgotten and the key may name a new request. */
  expiresAt: Date
}

/** The first answer, as a repeat gets it again: the body as bytes, in the adapter's own encoding. */
export interface StoredResponse {
  status: number
  headers: Record<string, string>
  body: Uint8Array
}

/** What a completed request leaves: its answer, and the person whose data that answer holds. */
export interface IdempotentAnswer {
  /** Deleting this person erases the answer (PersonRepository.delete, in the same transaction). */
  subject: string
  response: StoredResponse
}

export interface IdempotencyRecord {
  fingerprint: string
  token: string
  /** What a repeat is answered with; null while the first request runs, and once erased. */
  response: StoredResponse | null
  /** The person the answer is about, once answered. */
  subject: string | null
  /** The answer went with its subject: a repeat learns only that the person is gone. */
  erased: boolean
  lockedUntil: Date
  expiresAt: Date
}

export type ClaimResult = { claimed: true } | { claimed: false, record: IdempotencyRecord }

/**
 * Port: where idempotency records are kept, shared by every instance of the
 * service and kept across restarts.
 */
export interface IdempotencyRepository {
  /**
   * Writes the claim when no live record holds its (scope, key) — a record
   * expired at `now` counts as none — in one atomic step; otherwise answers
   * the record that holds it.
   */
  claim(claim: IdempotencyClaim, now: Date): Promise<ClaimResult>
  /**
   * Hands an unanswered record held by `previousToken` to `claim` (its
   * holder stopped without answering); false when it is answered or
   * held by another token by now.
   */
  takeOver(claim: IdempotencyClaim, previousToken: string): Promise<boolean>
  /** Stores the answer of the request holding `token`; false when that token no longer holds the key. */
  complete(scope: string, key: string, token: string, answer: IdempotentAnswer): Promise<boolean>
  /** Drops an unanswered record held by `token`, so that a repeat runs anew. */
  release(scope: string, key: string, token: string): Promise<void>
  /**
   * How many records of `owner` live at `now`, counting no further than
   * `atMost` (through the index on owner and expiry), and, when they reach
   * `atMost`, when the oldest of them expires.
   */
  liveRecordsOf(owner: string, now: Date, atMost: number): Promise<{ count: number, firstExpiry: Date | undefined }>
  /** Deletes at most `limit` records expired at `now`, through the index on expiry; how many went. */
  pruneExpired(now: Date, limit: number): Promise<number>
}
