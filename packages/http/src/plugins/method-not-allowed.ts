import { METHODS } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.js'

/** The methods of the API, in the order an Allow header lists them. */
const COMMON = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']

/**
 * Every method Node's parser lets through (it refuses others before Fastify
 * sees them), but CONNECT, which Node hands to its own event, never to a route.
 */
const ANSWERED = [...COMMON, ...METHODS.filter((method) => method !== 'CONNECT' && !COMMON.includes(method))]

/**
 * Fastify answers 404 for a known path with a method it does not offer; the
 * contract says 405 with an Allow header. Teaches the router every method it
 * does not know yet (PROPFIND, SEARCH, …: otherwise 404 on any path), collects
 * every route as it is added, then (call `close()` after the last route)
 * registers, per path, one route for the remaining methods. Call it before
 * the first route.
 */
export const trackMethods = (app: FastifyInstance) => {
  for (const method of ANSWERED) if (!app.supportedMethods.includes(method)) app.addHttpMethod(method)
  const paths = new Set<string>()
  app.addHook('onRoute', (route) => {
    if (!route.config?.methodNotAllowed) paths.add(route.url)
  })
  return {
    close (): void {
      for (const url of paths) {
        if (url === '*') continue
        // Asked of the router rather than of the routes seen: a plugin's root
        // route under a prefix is served at '/docs' and '/docs/', and
        // Fastify tells of only some of what it registers there.
        const allowed = ANSWERED.filter((method) => app.hasRoute({ method, url }))
        const missing = ANSWERED.filter((method) => !allowed.includes(method))
        if (missing.length === 0) continue
        const allow = allowed.join(', ')
        app.route({
          method: missing,
          url,
          schema: { hide: true },
          config: { methodNotAllowed: true },
          // Answered once the caller is known (the access hook, onRequest)
          // and before the body is read: a method the path does not offer
          // takes none, and a megabyte of JSON parsed for a 405 was 100 ms.
          preParsing: async (request, reply) => reply.code(405).header('allow', allow)
            .send(errorBody(405, `${request.method} is not offered on ${url}; use ${allow}`, 'METHOD_NOT_ALLOWED')),
          handler: async () => undefined
        })
      }
    }
  }
}
