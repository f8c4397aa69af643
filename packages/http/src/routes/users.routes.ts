import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Access } from '../plugins/access.js'
import { AccountSchema, NewAccountSchema } from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'

export const usersRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  app.post('/users', {
    config: { operation: 'users.create' },
    schema: {
      operationId: 'createAccount',
      tags: ['auth'],
      summary: 'Create an account (admins)',
      body: NewAccountSchema,
      response: { 201: documented(AccountSchema, { description: 'Created: the account', example: EXAMPLES.account }), ...errorResponses(400, 401, 403, 429) }
    }
  }, async (request, reply) => reply.code(201).send(await access.useCases.createAccount(request.body)))
}
