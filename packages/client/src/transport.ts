import { PeopleServiceError } from './errors.js'
import type { AbortSignalLike, Fetch, FetchResponse } from './platform.js'
import { backoffMs, isRetryableAnswer, mayResendAfterNetworkError, retryAfterMs, type RetryPolicy } from './retry-policy.js'

/** One call as the resources describe it. */
export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** A path with its query (`/people?limit=10`), or a URL of the service's own origin (a `Link`). */
  path: string
  body?: unknown
  headers?: Record<string, string | undefined>
  /** Sent as Idempotency-Key, the same on every attempt. */
  idempotencyKey?: string
  /** How long one attempt may take beyond the client's timeout (long polls). */
  extraTimeoutMs?: number
  signal?: AbortSignalLike | undefined
}

/** A successful answer, its body parsed. */
export interface Answer {
  status: number
  url: string
  headers: { get(name: string): string | null }
  body: unknown
}

export interface TransportOptions {
  baseUrl: string
  fetch: Fetch
  retry: RetryPolicy
  timeoutMs: number
  credentials: () => Promise<Record<string, string>>
  headers: Record<string, string>
}

export type Transport = (call: Call) => Promise<Answer>

/**
 * Sends calls with the client's credentials and retries what is safe to
 * retry: answers that say "not done, try later" after their Retry-After, and
 * failed connections where sending twice is harmless. At most
 * `retry.maxAttempts` attempts; then the last failure is thrown.
 */
export const createTransport = (options: TransportOptions): Transport => {
  const base = new URL(options.baseUrl)
  // The service's paths, and the Links it hands out, start at its root.
  if (base.pathname !== '/' || base.search !== '') throw new TypeError(`baseUrl must be the service's origin (scheme, host and port), not ${options.baseUrl}`)
  const origin = base.origin
  const sleep = (ms: number, signal: AbortSignalLike | undefined) => new Promise<void>((resolve, reject) => {
    if (signal?.aborted === true) { reject(signal.reason); return }
    const onAbort = () => { clearTimeout(timer); reject(signal?.reason) }
    const timer = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })

  return async (call) => {
    const url = new URL(call.path, options.baseUrl)
    // Credentials go to the service's own origin only, whatever a Link says.
    if (url.origin !== origin) throw new PeopleServiceError(`refusing to send credentials to ${url.origin}`, { statusCode: 0, code: 'INVALID_RESPONSE' })
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    for (const [name, value] of Object.entries(call.headers ?? {})) if (value !== undefined) headers[name] = value
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey
    const body = call.body === undefined ? undefined : JSON.stringify(call.body)
    if (body !== undefined) headers['content-type'] = 'application/json'
    const resendable = mayResendAfterNetworkError(call.method, { idempotencyKey: call.idempotencyKey !== undefined, conditional: headers['if-match'] !== undefined })

    for (let attempt = 1; ; attempt++) {
      const last = attempt >= options.retry.maxAttempts
      const credentials = await options.credentials()
      let response: FetchResponse
      let text: string
      const controller = new AbortController()
      const onAbort = () => controller.abort(call.signal?.reason)
      call.signal?.addEventListener('abort', onAbort, { once: true })
      const timer = setTimeout(() => controller.abort(new Error('timed out')), options.timeoutMs + (call.extraTimeoutMs ?? 0))
      try {
        if (call.signal?.aborted === true) throw call.signal.reason
        response = await options.fetch(url.href, {
          method: call.method,
          headers: { ...headers, ...credentials },
          ...(body === undefined ? {} : { body }),
          signal: controller.signal
        })
        text = await response.text()
      } catch (error) {
        if (call.signal?.aborted === true) throw call.signal.reason
        const timedOut = controller.signal.aborted
        if (last || !resendable) {
          const what = timedOut ? 'timed out' : 'failed before the service answered'
          throw new PeopleServiceError(`${call.method} ${url.pathname} ${what}${resendable ? ` (${attempt} attempts)` : '; not repeated, as it may have been done'}`, {
            statusCode: 0, code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR', cause: error
          })
        }
        await sleep(backoffMs(options.retry, attempt, Math.random()), call.signal)
        continue
      } finally {
        clearTimeout(timer)
        call.signal?.removeEventListener('abort', onAbort)
      }

      const requestId = response.headers.get('x-request-id') ?? undefined
      let parsed: unknown
      try {
        parsed = text === '' ? undefined : JSON.parse(text)
      } catch (cause) {
        throw new PeopleServiceError(`${call.method} ${url.pathname} answered ${response.status} with a body that is not JSON`, { statusCode: response.status, code: 'INVALID_RESPONSE', requestId, cause })
      }
      if (response.status < 400) return { status: response.status, url: url.href, headers: response.headers, body: parsed }

      const error = PeopleServiceError.fromResponse(response.status, requestId, parsed)
      if (last || !isRetryableAnswer(response.status, error.code)) throw error
      const delay = retryAfterMs(response.headers.get('retry-after'), Date.now()) ?? backoffMs(options.retry, attempt, Math.random())
      if (delay > options.retry.maxRetryDelayMs) throw error
      await sleep(delay, call.signal)
    }
  }
}
