/** A request a client may repeat, as the service tells one from another. */
export interface IdempotentRequest {
  /** Whose key it is (the caller): keys of different callers never meet. */
  scope: string
  /** The client's Idempotency-Key. */
  key: string
  /** A digest of what was asked (operation and body): the same key for another request is refused. */
  fingerprint: string
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

export interface IdempotencyRecord {
  fingerprint: string
  token: string
  /** What a repeat is answered with, opaque to the domain; null while the first request runs. */
  response: string | null
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
  complete(scope: string, key: string, token: string, response: string): Promise<boolean>
  /** Drops an unanswered record held by `token`, so that a repeat runs anew. */
  release(scope: string, key: string, token: string): Promise<void>
  /** Deletes at most `limit` records expired at `now`, through the index on expiry; how many went. */
  pruneExpired(now: Date, limit: number): Promise<number>
}
