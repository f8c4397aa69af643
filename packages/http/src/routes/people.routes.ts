import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { PeopleQuery } from '../schemas/list.schemas.js'
import { PersonSummarySchema } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import type { RouteOptions } from '../types.js'
import { linkNext } from './links.js'

export const peopleRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/people', {
    config: { operation: 'people.list' },
    schema: {
      operationId: 'listPeople',
      tags: ['people'],
      summary: 'List people, ordered by id',
      description: 'Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present.',
      querystring: PeopleQuery,
      response: {
        200: documented(Type.Array(Type.Ref(PersonSummarySchema)), { description: 'A page of people, ordered by id', example: EXAMPLES.people, headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor, name } = request.query
    const page = await useCases.listPeople({ limit, ...(cursor !== undefined ? { cursor } : {}), ...(name ? { name } : {}) })
    linkNext(request, reply, page.next)
    return page.items
  })
}
