import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/** Node marks a request that came by its server's 'upgrade' event. */
type MaybeUpgrade = IncomingMessage & { upgrade?: boolean }

/*
 * An upgrade request (`Connection: Upgrade`) reaches Fastify's routes
 * through @fastify/websocket, and only the WebSocket at /graphql takes it.
 * Any other route answers it over HTTP, after which the socket stayed open
 * for good: @fastify/websocket closes it only for the routes of the scope
 * it is registered in (the GraphQL one). 700 such requests, no credentials
 * needed, left 703 sockets in CLOSE-WAIT, on the way to the process' file
 * limit. Once answered, such a socket goes.
 */
export const closeAnsweredUpgrades = (app: FastifyInstance): void => {
  app.addHook('onResponse', (request, _reply, done) => {
    if ((request.raw as MaybeUpgrade).upgrade === true) request.raw.socket.destroy()
    done()
  })
}
