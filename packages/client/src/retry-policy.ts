/** How the client retries; every field has a default (ClientOptions). */
export interface RetryPolicy {
  /** Attempts per call, the first included (default 3). */
  maxAttempts: number
  /** A Retry-After longer than this is not waited for: the call fails at once (default 30,000 ms). */
  maxRetryDelayMs: number
  /** The first back-off when the service names no delay; it doubles per attempt, with jitter (default 250 ms). */
  baseDelayMs: number
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, maxRetryDelayMs: 30_000, baseDelayMs: 250 }

/** Methods that mean the same done twice as once (RFC 9110 §9.2.2). */
const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE'])

/**
 * Whether a request may be sent again after the connection failed, when the
 * service may or may not have acted on it: only where acting twice is the
 * same as once, or where an Idempotency-Key makes the service answer a repeat
 * with its first answer. A conditional write (If-Match) is not: had the first
 * been done, the repeat would fail as if someone else had changed the resource.
 */
export const mayResendAfterNetworkError = (method: string, request: { idempotencyKey: boolean, conditional: boolean }): boolean =>
  request.idempotencyKey || (IDEMPOTENT_METHODS.has(method) && !(request.conditional && method !== 'GET' && method !== 'HEAD'))

/**
 * Whether an answer says "not done, try later": 429 and 503 are refused before
 * the request runs; 409 IDEMPOTENCY_KEY_IN_USE means the first request with the
 * same key still runs, and a repeat gets its answer once it is done.
 */
export const isRetryableAnswer = (status: number, code: string | undefined): boolean =>
  status === 429 || status === 503 || (status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE')

/** Retry-After (RFC 9110 §10.2.3) in milliseconds from `now`: delay-seconds or an HTTP date. */
export const retryAfterMs = (value: string | null, now: number): number | undefined => {
  if (value === null) return undefined
  const trimmed = value.trim()
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Exponential back-off with full jitter in its upper half, for the attempt that just failed (1-based). */
export const backoffMs = (policy: RetryPolicy, attempt: number, random: number): number =>
  Math.min(policy.maxRetryDelayMs, policy.baseDelayMs * 2 ** (attempt - 1)) * (0.5 + random / 2)
