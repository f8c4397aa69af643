import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'

export interface HealthOptions {
  /** True when every dependency needed to serve requests answers. */
  ready(): Promise<boolean>
}

const Status = Type.Object({ status: Type.Union([Type.Literal('ok'), Type.Literal('unavailable')]) })

export const healthRoutes: FastifyPluginAsyncTypebox<HealthOptions> = async (app, { ready }) => {
  app.get('/health/live', {
    config: { operation: 'health.live' },
    schema: {
      operationId: 'liveness',
      tags: ['operations'],
      summary: 'The process is up',
      response: { 200: documented(Status, { description: 'Up', example: EXAMPLES.health }) }
    }
  }, async () => ({ status: 'ok' as const }))

  app.get('/health/ready', {
    config: { operation: 'health.ready' },
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
