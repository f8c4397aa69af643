import type { FastifyInstance, FastifyRequest } from 'fastify'
import { LIMITS } from './limits.js'

/**
 * Whether the request came with a body that nothing has read, and that
 * may be larger than any body the service reads: it was answered first
 * (refused before its body: no credentials, a method the path does not
 * offer, an expectation not met). A body of a size the service accepts is
 * left for Node to read past: closing while the client still sends makes
 * its TCP stack reset the connection, and the client may never see the
 * answer (a 401 for an expired token, say).
 */
const bodyLeftUnread = (request: FastifyRequest): boolean => {
  if (request.raw.complete) return false
  const length = request.headers['content-length']
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) > LIMITS.bodyBytes)
}

/**
 * `Connection: close` on a response when the connection should not be
 * kept:
 * - once the server starts closing, so keep-alive clients reconnect
 *   elsewhere instead of holding the process open until their sockets time
 *   out;
 * - after a request answered before a body larger than any the service
 *   reads, or of a length not declared (chunked). To read the next request
 *   on the connection Node would read that body to its end and throw it
 *   away: a declared 100 GB behind a 401 or an unmet Expect was read for 30 s (the
 *   request timeout), 7 s of CPU for the 5.6 GB that came. Closed, the
 *   body is read no further.
 */
export const installClosingHeader = (app: FastifyInstance): void => {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing || bodyLeftUnread(request)) reply.header('connection', 'close')
    done(null, payload)
  })
}
