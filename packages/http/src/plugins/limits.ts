import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.js'

export const LIMITS = {
  /** Largest request body accepted, in bytes. */
  bodyBytes: 1024 * 1024,
  /** Largest query string accepted, in characters. */
  queryStringLength: 4096
} as const

/** What Node's HTTP server takes for `100-continue` (its continueExpression). */
const CONTINUE = /(?:^|\W)100-continue(?:$|\W)/i

/**
 * The query string's length and the `Expect` header, checked after the
 * access hooks (onRequest) and before the body is read: a caller's refusal
 * carries its budget's headers and `no-store`, and is charged like any
 * request; without credentials, a protected path answers 401 first. Both
 * are 400, as every client-side error the contract does not name otherwise
 * (an `Expect` is refused as HTTP would with 417).
 */
// Hooks on every request are synchronous (callback style): an async hook
// costs a promise and a microtask per request for work that never waits.
export const installLimits = (app: FastifyInstance): void => {
  app.addHook('preParsing', (request, reply, payload, done) => {
    const start = request.url.indexOf('?')
    if (start !== -1 && request.url.length - start - 1 > LIMITS.queryStringLength) {
      reply.code(400).send(errorBody(400, `the query string is longer than ${LIMITS.queryStringLength} characters`, 'QUERY_TOO_LARGE'))
      return
    }
    // Node has sent 100 Continue for `100-continue`; no other expectation is met (pipelining.ts hands these over).
    const { expect } = request.headers
    if (expect !== undefined && !CONTINUE.test(expect)) {
      reply.code(400).send(errorBody(400, 'the only expectation this server meets is Expect: 100-continue', 'EXPECTATION_FAILED'))
      return
    }
    done(null, payload)
  })
}
