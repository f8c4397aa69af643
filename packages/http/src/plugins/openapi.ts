import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'

/**
 * The OpenAPI document is generated from the route schemas, so it cannot
 * drift from what the routes validate and return. Registered before the
 * routes: it collects them as they are added.
 */
export const registerOpenApi = async (app: FastifyInstance): Promise<void> => {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'People Service',
        version: '0.1.0',
        description: 'People, friendships and messages over REST; GraphQL at /graphql (see GRAPHQL.md). ' +
          'Errors are JSON: { statusCode, error, message, code? }.'
      },
      tags: [
        { name: 'people' }, { name: 'friends' }, { name: 'messages' }, { name: 'operations' }
      ]
    },
    // The GraphiQL assets and the metrics endpoint are not part of the API.
    transform: ({ schema, url }) => ({
      schema: /^\/(graphiql|metrics)/.test(url) ? { ...schema, hide: true } : schema,
      url
    }),
    // Shared schemas become named components instead of anonymous copies.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`) }
  })
  await app.register(swaggerUi, { routePrefix: '/docs' })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
