import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { EXAMPLES } from '../schemas/examples.js'
import { documented, headersOf, withoutBody } from '../schemas/response.schemas.js'
import { sendFile } from '../plugins/static-assets.js'

/** The package's own version: one source for the root document and the OpenAPI document. */
export const SERVICE_VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

const FAVICON = fileURLToPath(new URL('../../static/favicon.ico', import.meta.url))

const Root = Type.Object({
  name: Type.String(),
  version: Type.String(),
  docs: Type.String({ description: 'Interactive API docs' }),
  graphiql: Type.String({ description: 'The GraphQL editor (outside production)' }),
  openapi: Type.String({ description: 'The OpenAPI document' })
})

/**
 * The address `npm start` prints: where the service's documentation is,
 * without credentials (docs/API.md, "Public"); and the icon browsers ask for
 * beside it, so that neither answers 401.
 */
export const rootRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/', {
    config: { operation: 'root' },
    schema: {
      operationId: 'root',
      tags: ['docs'],
      summary: 'What this service is, and where its docs are',
      response: { 200: documented(Root, { description: 'The service and its documentation', example: { ...EXAMPLES.root, version: SERVICE_VERSION } }) }
    }
  }, async () => ({ name: 'People Service', version: SERVICE_VERSION, docs: '/docs', graphiql: '/graphiql', openapi: '/openapi.json' }))

  app.get('/favicon.ico', {
    config: { operation: 'favicon' },
    schema: {
      operationId: 'favicon',
      tags: ['docs'],
      summary: 'The service\'s icon, for browser tabs',
      response: {
        200: {
          description: 'The icon (a 16×16 PNG inside an ICO)',
          headers: headersOf(['ETag', 'Cache-Control']),
          content: { 'image/x-icon': { schema: { type: 'string', contentMediaType: 'image/x-icon' }, example: '(16×16 icon, 122 bytes)' } }
        },
        304: withoutBody({ description: 'The icon the client holds (If-None-Match) is current', headers: ['ETag', 'Cache-Control'] })
      }
    }
  }, async (request, reply) => sendFile(request, reply, FAVICON))
}
