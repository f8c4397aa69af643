import type { Caller, UseCases } from '@people-service/domain'
import type { Operation } from './auth/policy.js'

export type { Caller }

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the access hook on every protected route; undefined on public ones. */
    caller: Caller | undefined
  }
  interface FastifyContextConfig {
    /** The row of the policy table (auth/policy.ts) this route answers to. */
    operation?: Operation
    /** Marks the routes that only answer 405, so they are not listed as offered. */
    methodNotAllowed?: boolean
  }
}

export interface RouteOptions {
  useCases: UseCases
}
