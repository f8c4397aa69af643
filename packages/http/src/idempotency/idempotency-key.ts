import { createHash } from 'node:crypto'
import type { IdempotentRequest, StoredResponse } from '@people-service/domain'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { callerOf } from '../plugins/access.js'

/*
 * Idempotency-Key (IETF draft "The Idempotency-Key HTTP Header Field") on
 * the routes that create: the domain runs the request once per caller and
 * key (use-cases/idempotently.ts); here the key is read, the request is
 * fingerprinted, and the first answer is written down and replayed.
 */

/**
 * The caller, their key, and a digest of the route and body: the same key
 * sent with another body, or to another route, is another request (422).
 */
export const idempotentRequestOf = (request: FastifyRequest, key: string): IdempotentRequest => ({
  scope: callerOf(request).id,
  owner: callerOf(request).accountId,
  key,
  fingerprint: createHash('sha256')
    .update(`${request.method} ${request.routeOptions.url ?? ''}\n${JSON.stringify(request.body ?? null)}`)
    .digest('base64url')
})

/** What a repeat will be answered with: the body as its JSON text, once; serialised by the route's schema again on replay. */
export const storedResponse = (status: number, headers: Record<string, string>, body: object): StoredResponse =>
  ({ status, headers, body: Buffer.from(JSON.stringify(body)) })

/** Answers a repeat with the first answer, marked as such; `seen` narrows its body to what the caller may see now. */
export const replay = (reply: FastifyReply, stored: StoredResponse, seen: (body: object) => unknown = (body) => body): FastifyReply => {
  const body = JSON.parse(Buffer.from(stored.body).toString('utf8')) as object
  return reply.code(stored.status).headers(stored.headers).header('idempotent-replayed', 'true').send(seen(body))
}
