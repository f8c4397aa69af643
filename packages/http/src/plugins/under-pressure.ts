import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import { errorBody } from './errors.js'

export interface PressureOptions {
  /** Event-loop delay, in ms, past which new requests are turned away. */
  maxEventLoopDelay: number
  /** How often the event loop is sampled, in ms. */
  sampleInterval?: number
}

/**
 * When the event loop falls behind, answering late helps no one: new
 * requests get 503 with Retry-After at once, so a load balancer or client
 * can go elsewhere while the backlog drains.
 */
export const registerUnderPressure = async (app: FastifyInstance, { maxEventLoopDelay, sampleInterval = 1000 }: PressureOptions): Promise<void> => {
  await app.register(underPressure, {
    maxEventLoopDelay,
    sampleInterval,
    retryAfter: 5,
    pressureHandler: (_request, reply) => {
      reply.code(503).header('retry-after', '5')
        .send(errorBody(503, 'the service is overloaded, retry shortly', 'OVERLOADED'))
    }
  })
}
