import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'

/*
 * HTTP/1.1 lets a client send requests without waiting for the answers.
 * Node parses every request that has arrived and runs it, holding each
 * answer until the ones before it are taken. A client that sent a thousand
 * `GET /openapi.json` (39 KB) and read nothing made the server hold a
 * thousand copies of the 304 KB document: 145 → 779 MB and the event loop
 * held 1.3 s; a few such connections exhausted the heap and the process
 * died. So a connection may have MAX_UNANSWERED requests waiting for their
 * answers, where browsers and proxies keep far fewer; one more destroys it.
 *
 * Counted in front of Fastify, as the server hands requests over: past the
 * limit a request costs Node's parse and nothing more (through Fastify's
 * routing and hooks, each of a thousand more had cost 30 µs).
 *
 * A request whose `Expect` is not `100-continue` is handed over too, where
 * Node would answer 417 itself, uncounted: one connection sending 20,000
 * of those cost 450 ms of CPU. Counted here, Fastify answers it
 * (limits.ts): 400 with the headers and body of any other refusal.
 */
export const MAX_UNANSWERED = 16

const UNANSWERED = Symbol('unanswered requests')

type CountedSocket = Socket & { [UNANSWERED]?: number }

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void

/** Puts the limit in front of the server's request listeners (Fastify's). */
export const limitPipelining = (server: Server): void => {
  const listeners = server.listeners('request') as RequestListener[]
  server.removeAllListeners('request')
  const counted = (request: IncomingMessage, response: ServerResponse): void => {
    const socket: CountedSocket = request.socket
    const unanswered = (socket[UNANSWERED] ?? 0) + 1
    if (unanswered > MAX_UNANSWERED) {
      socket.destroy()
      return
    }
    socket[UNANSWERED] = unanswered
    // Once the answer is handed to the socket, or the client went away.
    response.once('close', () => { socket[UNANSWERED] = (socket[UNANSWERED] ?? 1) - 1 })
    for (const listener of listeners) listener(request, response)
  }
  server.on('request', counted)
  server.on('checkExpectation', counted)
}
