import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { createUseCases, type Ports } from '@people-service/domain'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { installAccess, type AccessOptions } from './plugins/access.js'
import { installClosingHeader } from './plugins/closing.js'
import { installErrorHandling } from './plugins/errors.js'
import { installLimits, LIMITS } from './plugins/limits.js'
import { trackMethods } from './plugins/method-not-allowed.js'
import { installRequestId, requestIdOf } from './plugins/request-id.js'
import { installValidation } from './plugins/validation.js'
import { apiKeysRoutes } from './routes/api-keys.routes.js'
import { authRoutes } from './routes/auth.routes.js'
import { friendsRoutes } from './routes/friends.routes.js'
import { healthRoutes } from './routes/health.routes.js'
import { messagesRoutes } from './routes/messages.routes.js'
import { peopleRoutes } from './routes/people.routes.js'
import { personRoutes } from './routes/person.routes.js'
import { usersRoutes } from './routes/users.routes.js'
import { ErrorSchema } from './schemas/error.schema.js'
import { MessageSchema } from './schemas/message.schemas.js'
import { PersonSchema, PersonSummarySchema } from './schemas/person.schemas.js'
import './types.js'

export interface AppOptions {
  ports: Ports
  /** Identity, authorization and limits: required, there is no unauthenticated mode. */
  access: AccessOptions
  /** Readiness of the dependencies (the database); defaults to always ready. */
  ready?: () => Promise<boolean>
  logger?: FastifyServerOptions['logger']
}

/** Builds the whole HTTP application. Never listens: the caller decides where. */
export const buildApp = async ({ ports, access: accessOptions, ready = async () => true, logger = false }: AppOptions): Promise<FastifyInstance> => {
  const app = Fastify({
    logger,
    bodyLimit: LIMITS.bodyBytes,
    genReqId: requestIdOf,
    // Path segments longer than this cannot be ids: the router answers 404.
    routerOptions: { maxParamLength: 200 },
    // Strict JSON: prototype-poisoning keys are refused, not silently kept.
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error'
  }).withTypeProvider<TypeBoxTypeProvider>()

  app.decorateRequest('caller', undefined)
  // Only JSON is spoken; anything else is an unsupported content type (400).
  app.removeContentTypeParser('text/plain')
  installValidation(app)
  installErrorHandling(app)
  installRequestId(app)
  installLimits(app)
  installClosingHeader(app)
  for (const schema of [ErrorSchema, PersonSchema, PersonSummarySchema, MessageSchema]) app.addSchema(schema)

  // Before any route: its onRoute check must see every one of them.
  const access = await installAccess(app, ports, accessOptions)
  const methods = trackMethods(app)
  const useCases = createUseCases(ports)
  await app.register(healthRoutes, { ready })
  await app.register(authRoutes, { access })
  await app.register(usersRoutes, { access })
  await app.register(apiKeysRoutes, { access })
  await app.register(peopleRoutes, { useCases })
  await app.register(personRoutes, { useCases })
  await app.register(friendsRoutes, { useCases })
  await app.register(messagesRoutes, { useCases })
  methods.close()

  return app
}
