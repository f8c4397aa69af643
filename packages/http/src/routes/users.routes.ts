import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Access } from '../plugins/access.js'
import { AccountSchema, NewAccountSchema } from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'

export const usersRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  app.post('/users', {
    config: { operation: 'users.create' },
    schema: {
      tags: ['auth'],
      summary: 'Create an account (admins)',
      body: NewAccountSchema,
      response: { 201: AccountSchema, ...errorResponses(400, 401, 403, 429) }
    }
  }, async (request, reply) => reply.code(201).send(await access.useCases.createAccount(request.body)))
}
