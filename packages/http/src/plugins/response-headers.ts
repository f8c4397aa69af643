import type { FastifyInstance } from 'fastify'

/**
 * The headers every response starts with: its request id, then a block that
 * is the same for every response (the security headers), computed once at
 * start and kept as a frozen list of lower-case names and values. One
 * synchronous hook sets them all: no object to walk per request, and no hook
 * per header group.
 */
export const installResponseHeaders = (app: FastifyInstance, constant: ReadonlyArray<readonly [string, string]>): void => {
  const block = Object.freeze(constant.map(([name, value]) => Object.freeze([name.toLowerCase(), value] as const)))
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id)
    for (let i = 0; i < block.length; i++) reply.header(block[i]![0], block[i]![1])
    done()
  })
}
