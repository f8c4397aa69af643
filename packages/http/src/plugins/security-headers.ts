import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import type { FastifyInstance } from 'fastify'

export interface CorsOptions {
  /** Origins allowed to call the API from a browser; none by default. */
  origins: string[]
}

/**
 * Security headers on every response (helmet). The content security policy
 * is left off: the API answers JSON, and the two HTML pages it serves
 * (/docs, /graphiql) run inline scripts a strict policy would block.
 * CORS answers only the configured origins, never `*`: credentials are sent
 * in headers, and a wildcard would let any page spend a user's key.
 */
export const registerSecurityHeaders = async (app: FastifyInstance, { origins }: CorsOptions): Promise<void> => {
  await app.register(helmet, { contentSecurityPolicy: false, crossOriginEmbedderPolicy: false })
  if (origins.length === 0) return
  const allowed = new Set(origins)
  await app.register(cors, {
    // Requests from other origins, and requests without one, are not CORS
    // requests here: they go on to the route (a bare OPTIONS gets its 405).
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    allowedHeaders: ['content-type', 'authorization', 'x-api-key', 'x-request-id'],
    exposedHeaders: ['location', 'link', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'],
    maxAge: 600
  })
}
