import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/** Sets the headers every response starts with. */
export type SetResponseHeaders = (request: FastifyRequest, reply: FastifyReply) => void

/**
 * The headers every response starts with: its request id, then a block that
 * is the same for every response (the security headers), computed once at
 * start and kept as a frozen list of lower-case names and values: no object
 * to walk per request.
 */
export const responseHeaders = (constant: ReadonlyArray<readonly [string, string]>): SetResponseHeaders => {
  const block = Object.freeze(constant.map(([name, value]) => Object.freeze([name.toLowerCase(), value] as const)))
  return (request, reply) => {
    reply.header('x-request-id', request.id)
    for (let i = 0; i < block.length; i++) reply.header(block[i]![0], block[i]![1])
  }
}

/** One synchronous hook sets them on every response that reaches the hooks; no hook per header group. */
export const installResponseHeaders = (app: FastifyInstance, set: SetResponseHeaders): void => {
  app.addHook('onRequest', (request, reply, done) => {
    set(request, reply)
    done()
  })
}
