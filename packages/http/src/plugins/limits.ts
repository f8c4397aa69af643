import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.js'

export const LIMITS = {
  /** Largest request body accepted, in bytes. */
  bodyBytes: 1024 * 1024,
  /** Largest query string accepted, in characters. */
  queryStringLength: 4096
} as const

// Hooks on every request are synchronous (callback style): an async hook
// costs a promise and a microtask per request for work that never waits.
export const installLimits = (app: FastifyInstance): void => {
  app.addHook('onRequest', (request, reply, done) => {
    const start = request.url.indexOf('?')
    if (start !== -1 && request.url.length - start - 1 > LIMITS.queryStringLength) {
      reply.code(400).send(errorBody(400, `the query string is longer than ${LIMITS.queryStringLength} characters`, 'QUERY_TOO_LARGE'))
      return
    }
    done()
  })
}
