import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

// A caller's id is echoed into logs and headers: keep it short and plain.
const ACCEPTABLE = /^[\w.:-]{1,128}$/

/** Takes the caller's X-Request-Id when it is sensible, else makes one. */
export const requestIdOf = (request: IncomingMessage): string => {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID()
}

export const installRequestId = (app: FastifyInstance): void => {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    done()
  })
}
