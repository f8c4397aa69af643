import type { UseCases } from '@people-service/domain'

/** Who is calling; set by authentication, read by the routes that record it. */
export interface Caller {
  id: string
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | undefined
  }
  interface FastifyContextConfig {
    /** Marks the routes that only answer 405, so they are not listed as offered. */
    methodNotAllowed?: boolean
  }
}

export interface RouteOptions {
  useCases: UseCases
}

/** Until a caller is authenticated, messages are recorded as sent by this id. */
export const ANONYMOUS_CALLER: Caller = { id: 'anonymous' }
