import type { FastifyInstance, FastifyRequest } from 'fastify'

/**
 * Whether the request came with a body that nothing has read: it was
 * answered first (refused before its body: no credentials, a method the
 * path does not offer, an expectation not met).
 */
const bodyLeftUnread = (request: FastifyRequest): boolean =>
  !request.raw.complete && (request.headers['content-length'] !== undefined || request.headers['transfer-encoding'] !== undefined)

/**
 * `Connection: close` on a response when the connection should not be
 * kept:
 * - once the server starts closing, so keep-alive clients reconnect
 *   elsewhere instead of holding the process open until their sockets time
 *   out;
 * - after a request answered before its body was read. To read the next
 *   request on the connection Node would read that body to its end and
 *   throw it away: a declared 100 GB behind a 401 or a 417 was read for 30
 *   s (the request timeout), 7 s of CPU for the 5.6 GB that came. Closed,
 *   the body is read no further.
 */
export const installClosingHeader = (app: FastifyInstance): void => {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing || bodyLeftUnread(request)) reply.header('connection', 'close')
    done(null, payload)
  })
}
