import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { PeopleQuery } from '../schemas/list.schemas.js'
import { PersonSummarySchema } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import type { RouteOptions } from '../types.js'
import { sendJsonText } from './json-text.js'
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
    // The page comes as the JSON array it is answered with, built by the
    // database: a string with a JSON content type is sent as it is.
    const page = await useCases.listPeopleJson({ limit, ...(cursor !== undefined ? { cursor } : {}), ...(name !== undefined ? { name } : {}) })
    linkNext(request, reply, page.next)
    return sendJsonText(reply, page.json)
  })
}
