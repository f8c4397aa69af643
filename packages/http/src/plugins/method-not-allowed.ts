import type { FastifyInstance, HTTPMethods } from 'fastify'
import { errorBody } from './errors.js'

const ANSWERED: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE']

/**
 * Fastify answers 404 for a known path with a method it does not offer; the
 * contract says 405 with an Allow header. Collects every route as it is
 * added, then (call `close()` after the last route) registers, per path, one
 * route for the remaining methods.
 */
export const trackMethods = (app: FastifyInstance) => {
  const offered = new Map<string, Set<string>>()
  app.addHook('onRoute', (route) => {
    if (route.config?.methodNotAllowed) return
    const methods = offered.get(route.url) ?? new Set<string>()
    for (const method of [route.method].flat()) methods.add(method)
    offered.set(route.url, methods)
  })
  return {
    /** The route table so far: path → methods offered, HEAD included where GET is. */
    table (): Map<string, string[]> {
      return new Map([...offered].map(([url, methods]) => {
        const all = new Set(methods)
        if (all.has('GET')) all.add('HEAD')
        return [url, ANSWERED.filter((m) => all.has(m))]
      }))
    },
    close (): void {
      for (const [url, methods] of this.table()) {
        const missing = ANSWERED.filter((m) => !methods.includes(m))
        if (missing.length === 0 || url === '*') continue
        const allow = methods.join(', ')
        app.route({
          method: missing,
          url,
          schema: { hide: true },
          config: { methodNotAllowed: true },
          handler: async (request, reply) => reply.code(405).header('allow', allow)
            .send(errorBody(405, `${request.method} is not offered on ${url}; use ${allow}`, 'METHOD_NOT_ALLOWED'))
        })
      }
    }
  }
}
