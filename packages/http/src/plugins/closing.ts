import type { FastifyInstance } from 'fastify'

/**
 * Once the server starts closing, every response says `Connection: close`,
 * so keep-alive clients reconnect elsewhere instead of holding the process
 * open until their sockets time out.
 */
export const installClosingHeader = (app: FastifyInstance): void => {
  let closing = false
  app.addHook('preClose', async () => { closing = true })
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close')
    done(null, payload)
  })
}
