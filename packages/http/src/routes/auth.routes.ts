import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Access } from '../plugins/access.js'
import { LoginSchema, TokenSchema } from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'

export const authRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  app.post('/auth/login', {
    config: { operation: 'auth.login' },
    schema: {
      operationId: 'logIn',
      tags: ['auth'],
      summary: 'Exchange a username and password for a short-lived access token',
      description: 'Failed attempts are limited per client address and per username (429 with Retry-After).',
      body: LoginSchema,
      response: {
        200: documented(TokenSchema, { description: 'An access token: send it as `Authorization: Bearer <access_token>`', example: EXAMPLES.token, headers: ['Cache-Control'] }),
        ...errorResponses(400, 401, 429)
      }
    }
  }, async (request, reply) => {
    const { username, password } = request.body
    // Before any password is checked: guessing is limited by address and name.
    await access.limits.chargeLogin(request, reply, username)
    const account = await access.useCases.logIn(username, password)
    reply.header('cache-control', 'no-store')
    return { access_token: access.tokens.issue(account), token_type: 'Bearer' as const, expires_in: access.tokens.ttlSeconds }
  })
}
