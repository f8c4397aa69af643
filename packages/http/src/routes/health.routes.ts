import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'

export interface HealthOptions {
  /** True when every dependency needed to serve requests answers. */
  ready(): Promise<boolean>
}

const Status = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) })

/**
 * The probes are answered whatever the load, where every other request is
 * turned away while the event loop lags (plugins/under-pressure.ts): a
 * liveness probe refused under load has the orchestrator restart a busy
 * instance, and readiness says whether the database answers (docs/API.md).
 * Shed, readiness had been answered 500 (the 503 error body is not its shape).
 */
const servedUnderPressure = (): void => {}

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { ready }) => {
  app.get('/health/live', {
    config: { operation: 'health.live', pressureHandler: servedUnderPressure },
    schema: {
      operationId: 'liveness',
      tags: ['operations'],
      summary: 'The process is up',
      response: { 200: documented(Status, { description: 'Up', example: EXAMPLES.health }) }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/health/ready', {
    config: { operation: 'health.ready', pressureHandler: servedUnderPressure },
    schema: {
      operationId: 'readiness',
      tags: ['operations'],
      summary: 'The database answers',
      response: {
        200: documented(Status, { description: 'Ready: the database answers', example: EXAMPLES.health }),
        503: documented(Status, { description: 'Not ready: the database does not answer', example: EXAMPLES.unavailable })
      }
    }
  }, async (_request, reply) => {
    const ok = await ready().catch(() => false)
    return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable' })
  })
}
