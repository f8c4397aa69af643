import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createUseCases, type Ports } from '@people-service/domain'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { installClosingHeader } from './plugins/closing.js'
import { answerRouterError, installErrorHandling } from './plugins/errors.js'
import { installJsonBody } from './plugins/json-body.js'
import { installLimits, LIMITS } from './plugins/limits.js'
import { trackMethods } from './plugins/method-not-allowed.js'
import { installRequestId, requestIdOf } from './plugins/request-id.js'
import { installValidation } from './plugins/validation.js'
import { friendsRoutes } from './routes/friends.routes.js'
import { healthRoutes } from './routes/health.routes.js'
import { messagesRoutes } from './routes/messages.routes.js'
import { peopleRoutes } from './routes/people.routes.js'
import { personRoutes } from './routes/person.routes.js'
import { ErrorSchema } from './schemas/error.schema.js'
import { MessageSchema } from './schemas/message.schemas.js'
import { PersonSchema, PersonSummarySchema } from './schemas/person.schemas.js'
import './types.js'

export interface AppOptions {
  ports: Ports
  /** Readiness of the dependencies (the database); defaults to always ready. */
  ready?: () => Promise<boolean>
  logger?: FastifyServerOptions['logger']
}

/** Builds the whole HTTP application. Never listens: the caller decides where. */
export const buildApp = async ({ ports, ready = async () => true, logger = false }: AppOptions): Promise<FastifyInstance> => {
  const app = Fastify({
    logger,
    bodyLimit: LIMITS.bodyBytes,
    genReqId: requestIdOf,
    // Path segments longer than this cannot be ids: the router answers 404.
    routerOptions: { maxParamLength: 200 },
    frameworkErrors: answerRouterError
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorateRequest('caller', undefined)
  installJsonBody(app)
  installValidation(app)
  installErrorHandling(app)
  installRequestId(app)
  installLimits(app)
  installClosingHeader(app)
  for (const schema of [ErrorSchema, PersonSchema, PersonSummarySchema, MessageSchema]) app.addSchema(schema)

  const methods = trackMethods(app)
  const useCases = createUseCases(ports)
  await app.register(healthRoutes, { ready })
  await app.register(peopleRoutes, { useCases })
  await app.register(personRoutes, { useCases })
  await app.register(friendsRoutes, { useCases })
  await app.register(messagesRoutes, { useCases })
  methods.close()

  return app
}
