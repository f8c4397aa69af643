import { WebhookVerificationError } from './errors.js'
import type { CloudEvent } from './events.types.js'

/** Headers as a fetch `Headers`, or as Node's `IncomingHttpHeaders` (lower-case names). */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>

export interface VerifyOptions {
  /** How far the `webhook-timestamp` may be from now, either way (default 300 s, as the specification advises). */
  toleranceSeconds?: number | undefined
  /** Now, in milliseconds since the epoch (tests). */
  now?: number | undefined
}

const header = (headers: WebhookHeaders, name: string): string | undefined => {
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined
  // A record built by hand may spell the names in any case; Node's are lower-case.
  const entry = Object.entries(headers as Record<string, string | string[] | undefined>).find(([key]) => key.toLowerCase() === name)
  const value = entry?.[1]
  return Array.isArray(value) ? value[0] : value
}

const base64ToBytes = (text: string): Uint8Array => Uint8Array.from(atob(text), (c) => c.charCodeAt(0))

/** The secret's key bytes: `whsec_` then base64, as the Standard Webhooks specification writes it. */
const secretKey = (secret: string): Uint8Array => {
  try {
    return base64ToBytes(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret)
  } catch {
    throw new WebhookVerificationError('the webhook secret is not base64 (whsec_…)')
  }
}

/** Compares in time that depends on the length alone. */
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let i = 0; i < a.length; i++) difference |= (a[i] ?? 0) ^ (b[i] ?? 0)
  return difference === 0
}

/**
 * Verifies a webhook request of the service (Standard Webhooks: `webhook-id`,
 * `webhook-timestamp`, `webhook-signature` holding `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">`) and returns the event it carries. `body` must be
 * the raw body as received, not re-serialized JSON. Throws
 * WebhookVerificationError when a header is missing, the timestamp is outside
 * the tolerance (replays), or no signature matches.
 */
export const verifyWebhook = async <Data = unknown>(secret: string, headers: WebhookHeaders, body: string | Uint8Array, options: VerifyOptions = {}): Promise<CloudEvent<Data>> => {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (id === undefined || timestamp === undefined || signatures === undefined) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header')
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds')
  const tolerance = options.toleranceSeconds ?? 300
  if (Math.abs((options.now ?? Date.now()) / 1000 - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp is outside the tolerance')

  const encoder = new TextEncoder()
  const payload = typeof body === 'string' ? encoder.encode(body) : body
  const prefix = encoder.encode(`${id}.${timestamp}.`)
  const signed = new Uint8Array(prefix.length + payload.length)
  signed.set(prefix)
  signed.set(payload, prefix.length)
  const key = await crypto.subtle.importKey('raw', secretKey(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const expected = new Uint8Array(await crypto.subtle.sign('HMAC', key, signed))
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2)
    if (version !== 'v1' || signature === undefined) return false
    try {
      return sameBytes(base64ToBytes(signature), expected)
    } catch {
      return false
    }
  })
  if (!matches) throw new WebhookVerificationError('no webhook-signature matches')
  const text = typeof body === 'string' ? body : new TextDecoder().decode(body)
  try {
    return JSON.parse(text) as CloudEvent<Data>
  } catch {
    throw new WebhookVerificationError('the signed body is not JSON')
  }
}
