import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { type Access, callerOf } from '../plugins/access.js'
import { ApiKeyIdParams, ApiKeySchema, ApiKeyUsageSchema, CreatedApiKeySchema, NewApiKeySchema } from '../schemas/access.schemas.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { ApiKeysQuery } from '../schemas/list.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { linkNext } from './links.js'

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ access: Access }> = async (app, { access }) => {
  const { useCases } = access

  app.post('/api-keys', {
    config: { operation: 'apiKeys.create' },
    schema: {
      operationId: 'createApiKey',
      tags: ['auth'],
      summary: 'Create an API key; the key is in this response only',
      description: 'An account owns at most MAX_KEYS_PER_ACCOUNT (default 100) live keys: one more is 409 TOO_MANY_KEYS.',
      body: NewApiKeySchema,
      response: {
        201: documented(CreatedApiKeySchema, {
          description: 'Created: the key, shown this once',
          example: { ...EXAMPLES.apiKey, key: 'ps_8Jm2c3ZkQ0yq4F7o1xVh9Wb5nT6aR2sLpK3dE0gU' },
          headers: ['Cache-Control']
        }),
        ...errorResponses(400, 401, 403, 409, 429)
      }
    }
  }, async (request, reply) => {
    const created = await useCases.createApiKey(callerOf(request), request.body)
    return reply.code(201).header('cache-control', 'no-store').send(created)
  })

  app.get('/api-keys', {
    config: { operation: 'apiKeys.list' },
    schema: {
      operationId: 'listApiKeys',
      tags: ['auth'],
      summary: 'The caller\'s active API keys (admins: everyone\'s), oldest first, without secrets',
      description: 'Up to 1,000 keys a page (`limit`, 1–1000, default 1000). Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present.',
      querystring: ApiKeysQuery,
      response: {
        200: documented(Type.Array(ApiKeySchema), { description: 'A page of keys, without their secrets', example: [EXAMPLES.apiKey], headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await useCases.listApiKeys(callerOf(request), { limit, ...(cursor === undefined ? {} : { cursor }) })
    linkNext(request, reply, page.next)
    return page.items
  })

  app.delete('/api-keys/:id', {
    config: { operation: 'apiKeys.revoke' },
    schema: {
      operationId: 'revokeApiKey',
      tags: ['auth'],
      summary: 'Revoke an API key; it stops working on the next request, on every instance',
      params: ApiKeyIdParams,
      response: {
        200: documented(Type.Object({ id: Type.String(), deleted: Type.Literal(true) }), { description: 'Revoked', example: { id: EXAMPLES.apiKey.id, deleted: true } }),
        ...errorResponses(401, 403, 404, 429)
      }
    }
  }, async (request) => {
    await useCases.revokeApiKey(callerOf(request), request.params.id)
    return { id: request.params.id, deleted: true as const }
  })

  app.get('/api-keys/:id/usage', {
    config: { operation: 'apiKeys.usage' },
    schema: {
      operationId: 'getApiKeyUsage',
      tags: ['auth'],
      summary: 'Requests made with an API key, per UTC day',
      params: ApiKeyIdParams,
      response: {
        200: documented(ApiKeyUsageSchema, { description: 'The key\'s requests so far', example: EXAMPLES.apiKeyUsage }),
        ...errorResponses(401, 403, 404, 429)
      }
    }
  }, async (request) => useCases.getApiKeyUsage(callerOf(request), request.params.id))
}
