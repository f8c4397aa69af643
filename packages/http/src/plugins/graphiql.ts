import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { headersOf } from '../schemas/response.schemas.js'
import { errorBody } from './errors.js'
import { PAGE_CONTENT_SECURITY_POLICY } from './security-headers.js'
import { sendFile } from './static-assets.js'

const require = createRequire(import.meta.url)
const packageDir = (name: string): string => dirname(require.resolve(`${name}/package.json`))

/**
 * GraphiQL at GET /graphiql, from the npm packages' own builds: Mercurius'
 * page loads React and GraphiQL from a CDN, so with no internet it is blank
 * (and it needs a CSP that trusts that CDN). Each asset is named here; nothing
 * else under /graphiql/ is served. Answered from memory (static-assets.ts).
 */
export const registerGraphiQL = async (app: FastifyInstance): Promise<void> => {
  const own = fileURLToPath(new URL('../../static/graphiql/', import.meta.url))
  const graphiql = packageDir('graphiql')
  const assets: Record<string, string> = {
    'graphiql.min.css': graphiql,
    'graphiql.min.js': graphiql,
    'react.production.min.js': join(packageDir('react'), 'umd'),
    'react-dom.production.min.js': join(packageDir('react-dom'), 'umd'),
    'page.css': own,
    'main.js': own
  }
  await app.register(async (scope) => {
    scope.addHook('onRequest', (_request, reply, done) => {
      reply.header('content-security-policy', PAGE_CONTENT_SECURITY_POLICY)
      done()
    })
    scope.get('/graphiql', {
      config: { operation: 'graphiql' },
      schema: {
        operationId: 'graphiql',
        tags: ['docs'],
        summary: 'GraphiQL, the GraphQL editor (served with no outside assets; off in production)',
        response: {
          200: {
            description: 'The page',
            headers: headersOf(['ETag', 'Cache-Control']),
            content: { 'text/html': { schema: { type: 'string' }, example: '<!DOCTYPE html><html lang="en">…</html>' } }
          }
        }
      }
    }, async (request, reply) => sendFile(request, reply, join(own, 'index.html')))
    for (const [name, root] of Object.entries(assets)) {
      scope.get(`/graphiql/${name}`, { config: { operation: 'graphiql' }, schema: { hide: true } },
        async (request, reply) => sendFile(request, reply, join(root, name)))
    }
  })
}

/**
 * In production, where GraphiQL is off, its path still answers as the
 * contract's public path it is, without credentials: 404, saying why, where
 * an unknown path would have asked for credentials (401).
 */
export const registerGraphiQLOff = (app: FastifyInstance): void => {
  app.get('/graphiql', { config: { operation: 'graphiql' }, schema: { hide: true } }, async (_request, reply) =>
    reply.code(404).send(errorBody(404, 'GraphiQL is off in production; any GraphQL client can use /graphql', 'GRAPHIQL_OFF')))
}
