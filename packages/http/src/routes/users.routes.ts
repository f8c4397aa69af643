import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { type Access, callerOf } from '../plugins/access.js'
import {
  AccountChangesSchema, AccountDeletedSchema, AccountIdParams, AccountSchema, CurrentCallerSchema, NewAccountSchema
} from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { AccountsQuery } from '../schemas/list.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { linkNext } from './links.js'
import { takeTurn } from '../turns.js'

export const usersRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  const { useCases } = access

  app.post('/users', {
    config: { operation: 'users.create' },
    schema: {
      operationId: 'createAccount',
      tags: ['auth'],
      summary: 'Create an account (admins, logged in)',
      body: NewAccountSchema,
      response: { 201: documented(AccountSchema, { description: 'Created: the account', example: EXAMPLES.account }), ...errorResponses(400, 401, 403, 409, 429) }
    }
  }, async (request, reply) => reply.code(201).send(await useCases.createAccount(callerOf(request), request.body)))

  app.get('/users', {
    config: { operation: 'users.list' },
    schema: {
      operationId: 'listAccounts',
      tags: ['auth'],
      summary: 'List accounts, ordered by username by code point, case-sensitive (admins, logged in)',
      description: 'Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present.',
      querystring: AccountsQuery,
      response: {
        200: documented(Type.Array(AccountSchema), { description: 'A page of accounts', example: EXAMPLES.accounts, headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await useCases.listAccounts({ limit, ...(cursor === undefined ? {} : { cursor }) })
    linkNext(request, reply, page.next)
    return page.items
  })

  app.get('/users/me', {
    config: { operation: 'users.me' },
    schema: {
      operationId: 'getCurrentAccount',
      tags: ['auth'],
      summary: 'The calling account (a key: its owner) and what this credential may do now',
      response: { 200: documented(CurrentCallerSchema, { description: 'The account and the scopes this credential holds now', example: EXAMPLES.currentCaller }), ...errorResponses(401, 429) }
    }
  }, async (request) => useCases.describeCaller(callerOf(request)))

  app.patch('/users/:id', {
    config: { operation: 'users.update' },
    schema: {
      operationId: 'updateAccount',
      tags: ['auth'],
      summary: 'Change an account\'s role, password or disabled flag (admins, logged in); its earlier tokens stop working',
      description: 'Refused with 409 LAST_ADMIN when it would leave no enabled admin, and with 409 ACCOUNT_BEING_DELETED ' +
        'while a deletion of the account is under way (see DELETE).',
      params: AccountIdParams,
      body: AccountChangesSchema,
      response: { 200: documented(AccountSchema, { description: 'The account as changed', example: EXAMPLES.account }), ...errorResponses(400, 401, 403, 404, 409, 429) }
    }
  }, async (request) => useCases.updateAccount(callerOf(request), request.params.id, request.body))

  app.delete('/users/:id', {
    config: { operation: 'users.delete' },
    schema: {
      operationId: 'deleteAccount',
      tags: ['auth'],
      summary: 'Delete an account and its API keys (admins, logged in); people and messages it wrote stay',
      description: 'The account\'s tokens and keys stop at once, on every instance. On the embedded SQLite database an account ' +
        'with 50 keys (revoked ones count) or 100 usage rows or more is disabled at once, then loses its keys a step at a time, ' +
        'taking turns with other requests: until the answer admins see it disabled with fewer keys, and a deletion cut short ' +
        '(the server stopped) leaves it so; deleting again finishes it. Meanwhile it cannot be changed: PATCH answers 409 ' +
        'ACCOUNT_BEING_DELETED.',
      params: AccountIdParams,
      response: { 200: documented(AccountDeletedSchema, { description: 'Deleted, with its API keys', example: EXAMPLES.deletedAccount }), ...errorResponses(401, 403, 404, 409, 429) }
    }
  }, async (request) => {
    await useCases.deleteAccount(callerOf(request), request.params.id, { beforeNextStep: takeTurn })
    return { id: request.params.id, deleted: true as const }
  })
}
