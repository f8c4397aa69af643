import { createHmac } from 'node:crypto'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import { webhookSigningKey } from '@people-service/domain'
import { hostOf, isRefusedAddress, refusingLookup } from './address-policy.js'

export interface SignedRequest {
  url: string
  /** The event id: the `webhook-id` header. */
  eventId: string
  body: string
  /** `whsec_…`. */
  secret: string
}

export interface SendOptions {
  /** The whole attempt, connection to response (10 s). */
  timeoutMs: number
  /** WEBHOOK_ALLOW_PRIVATE: http:// and private addresses too. */
  allowPrivate: boolean
  /** Of a response body, read before the connection is dropped. */
  maxResponseBytes: number
}

/** What an attempt came to: the status code answered, or why there was none. */
export type SendOutcome = { statusCode: number } | { statusCode: null, error: string, refused: boolean }

/** `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">` keyed by the secret's bytes (Standard Webhooks). */
export const webhookSignature = (secret: string, id: string, timestamp: number, body: string): string =>
  `v1,${createHmac('sha256', webhookSigningKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`

/**
 * POSTs one signed event. No redirect is followed (Node's client follows
 * none): a 3xx is an answer like any other non-2xx. The response is read up
 * to a bound and dropped; the whole attempt is cut at the timeout.
 */
export const sendWebhook = (signed: SignedRequest, options: SendOptions): Promise<SendOutcome> => new Promise((resolve) => {
  let url: URL
  try {
    url = new URL(signed.url)
  } catch {
    return resolve({ statusCode: null, error: 'the URL does not parse', refused: true })
  }
  const https = url.protocol === 'https:'
  if (!options.allowPrivate) {
    if (!https) return resolve({ statusCode: null, error: 'only https:// URLs are allowed', refused: true })
    // Node calls no lookup for an address literal: checked here instead.
    if (isIP(hostOf(url)) !== 0 && isRefusedAddress(hostOf(url))) return resolve({ statusCode: null, error: 'the address is not a public one', refused: true })
  }
  const timestamp = Math.floor(Date.now() / 1000)
  const body = Buffer.from(signed.body)
  let settled = false
  const finish = (outcome: SendOutcome) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    resolve(outcome)
  }
  const request = (https ? httpsRequest : httpRequest)(url, {
    method: 'POST',
    agent: false,
    ...(options.allowPrivate ? {} : { lookup: refusingLookup }),
    headers: {
      'content-type': 'application/cloudevents+json',
      'content-length': String(body.length),
      'user-agent': 'people-service-webhooks',
      'webhook-id': signed.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(signed.secret, signed.eventId, timestamp, signed.body)
    }
  }, (response: IncomingMessage) => {
    const statusCode = response.statusCode ?? 0
    let read = 0
    response.on('data', (chunk: Buffer) => {
      read += chunk.length
      if (read > options.maxResponseBytes) {
        response.destroy()
        finish({ statusCode })
      }
    })
    response.on('end', () => finish({ statusCode }))
    response.on('error', () => finish({ statusCode }))
  })
  const timer = setTimeout(() => {
    request.destroy()
    finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms`, refused: false })
  }, options.timeoutMs)
  request.on('error', (error: Error & { code?: string }) => {
    const refused = error.code === 'WEBHOOK_DESTINATION_REFUSED'
    finish({ statusCode: null, error: refused ? error.message : `the request failed (${error.code ?? 'network error'})`, refused })
  })
  request.end(body)
})
