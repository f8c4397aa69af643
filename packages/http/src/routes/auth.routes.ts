import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LOGIN_CHECKS_FACTOR } from '../auth/rate-limits.js'
import { type Access, callerOf } from '../plugins/access.js'
import { ChangePasswordSchema, LoginSchema, PasswordChangedSchema, TokenSchema } from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'

/**
 * A login's body: a username and a password of 4,096 characters (1,024 once
 * NFKC-normalized, with room for what normalizing shortens), each
 * character up to six bytes escaped. The door anyone may knock on reads no
 * more than that (the API's 1 MiB took 46–92 ms to parse, before any limit).
 */
const LOGIN_BODY_BYTES = 32_768

export const authRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  app.post('/auth/login', {
    config: { operation: 'auth.login' },
    bodyLimit: LOGIN_BODY_BYTES,
    schema: {
      operationId: 'logIn',
      tags: ['auth'],
      summary: 'Exchange a username and password for a short-lived access token',
      description: 'Failed attempts are limited per client address and per username, and password checks per username whatever their outcome ' +
        `(${LOGIN_CHECKS_FACTOR} × \`LOGIN_RATE_LIMIT_MAX\` per window: a check costs a thousand requests' CPU); past either, 429 with Retry-After, before any password is checked.`,
      body: LoginSchema,
      response: {
        200: documented(TokenSchema, { description: 'An access token: send it as `Authorization: Bearer <access_token>`', example: EXAMPLES.token, headers: ['Cache-Control'] }),
        ...errorResponses(400, 401, 429)
      }
    }
  }, async (request, reply) => {
    const { username, password } = request.body
    // Before any password is checked: guessing is limited by address and name.
    const account = await access.limits.guardLogin(request, reply, username, () => access.useCases.logIn(username, password))
    reply.header('cache-control', 'no-store')
    return { access_token: access.tokens.issue(account), token_type: 'Bearer' as const, expires_in: access.tokens.ttlSeconds }
  })

  app.post('/auth/password', {
    config: { operation: 'auth.password' },
    schema: {
      operationId: 'changePassword',
      tags: ['auth'],
      summary: 'Change the calling account\'s password; every token issued before stops working, this one included',
      body: ChangePasswordSchema,
      response: { 200: documented(PasswordChangedSchema, { description: 'Changed: log in again with the new password', example: EXAMPLES.passwordChanged }), ...errorResponses(400, 401, 403, 429) }
    }
  }, async (request, reply) => {
    const caller = callerOf(request)
    // A stolen token must not become a way to guess the password it lacks.
    const { username } = await access.useCases.describeCaller(caller)
    await access.limits.guardLogin(request, reply, username, () => access.useCases.changePassword(caller.accountId, request.body))
    return { changed: true as const }
  })
}
