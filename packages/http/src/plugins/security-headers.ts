import type { ServerResponse } from 'node:http'
import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import helmet, { type HelmetOptions } from 'helmet'

export interface CorsOptions {
  /** Origins allowed to call the API from a browser; none by default. */
  origins: string[]
}

/**
 * The headers helmet sets with these options. They do not depend on the
 * request, so helmet is run once, at start, against a response that only
 * records them. (@fastify/helmet rebuilds helmet's middleware from its options
 * on every request: a quarter of the time of a simple read.)
 */
export const helmetHeaders = (options: HelmetOptions): Record<string, string> => {
  const headers: Record<string, string> = {}
  const recorder = {
    setHeader (name: string, value: unknown) { headers[name.toLowerCase()] = String(value) },
    removeHeader (name: string) { delete headers[name.toLowerCase()] }
  }
  helmet(options)({} as never, recorder as unknown as ServerResponse, () => {})
  return headers
}

/**
 * The content security policy of the two HTML pages (/docs, /graphiql). They
 * run only scripts the service serves itself, with no inline script, so
 * `script-src 'self'` holds for them. Styles may be inline (both UIs set style
 * attributes from script); connections go to this origin only (fetch and the
 * GraphQL WebSocket). Sent by the pages' own routes: the API answers JSON,
 * which runs nothing, and its hot paths do not pay for the header.
 */
const PAGE_DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'self'"],
  'base-uri': ["'self'"],
  'connect-src': ["'self'"],
  'font-src': ["'self'", 'data:'],
  'form-action': ["'self'"],
  'frame-ancestors': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'object-src': ["'none'"],
  'script-src': ["'self'"],
  'script-src-attr': ["'none'"],
  'style-src': ["'self'", "'unsafe-inline'"]
}

export const PAGE_CONTENT_SECURITY_POLICY = Object.entries(PAGE_DIRECTIVES).map(([name, values]) => `${name} ${values.join(' ')}`).join('; ')

/** Security headers on every response: helmet's defaults (the pages add their content security policy above). */
export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> =
  Object.entries(helmetHeaders({ contentSecurityPolicy: false, crossOriginEmbedderPolicy: false }))

/**
 * CORS answers only the configured origins, never `*`: credentials are sent
 * in headers, and a wildcard would let any page spend a user's key.
 */
export const registerCors = async (app: FastifyInstance, { origins }: CorsOptions): Promise<void> => {
  if (origins.length === 0) return
  const allowed = new Set(origins)
  await app.register(cors, {
    // Requests from other origins, and requests without one, are not CORS
    // requests here: they go on to the route (a bare OPTIONS gets its 405).
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['content-type', 'authorization', 'x-api-key', 'x-request-id', 'idempotency-key', 'if-match', 'if-none-match'],
    exposedHeaders: ['location', 'link', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after', 'etag', 'idempotent-replayed'],
    maxAge: 600
  })
}
