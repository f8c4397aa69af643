import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { callerOf } from '../plugins/access.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { FriendsQuery } from '../schemas/list.schemas.js'
import { PersonIdParams, PersonSummarySchema } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import type { RouteOptions } from '../types.js'
import { linkNext } from './links.js'

const FriendshipParams = Type.Object({ id: Type.String(), friendId: Type.String() })

export const friendsRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id/friends', {
    config: { operation: 'friends.list' },
    schema: {
      operationId: 'listFriends',
      tags: ['friends'],
      summary: 'List the friends of a person, in the order they were stored',
      description: 'Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present, and every friend is listed once.',
      params: PersonIdParams,
      querystring: FriendsQuery,
      response: {
        200: documented(Type.Array(Type.Ref(PersonSummarySchema)), {
          description: 'A page of the person\'s friends, in the order the friends were stored (the order of their ids, but for people created at the same moment on PostgreSQL)',
          example: EXAMPLES.people,
          headers: ['Link']
        }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await useCases.listFriends(request.params.id, { limit, ...(cursor !== undefined ? { cursor } : {}) })
    linkNext(request, reply, page.next)
    return page.items
  })

  app.put('/person/:id/friends/:friendId', {
    config: { operation: 'friends.add' },
    schema: {
      operationId: 'addFriend',
      tags: ['friends'],
      summary: 'Make two people friends of each other (idempotent)',
      params: FriendshipParams,
      response: {
        200: documented(Type.Object({ personId: Type.String(), friendId: Type.String() }), { description: 'They are friends, both ways', example: EXAMPLES.friendship }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request) => {
    const { id, friendId } = request.params
    await useCases.befriend(callerOf(request), id, friendId)
    return { personId: id, friendId }
  })

  app.delete('/person/:id/friends/:friendId', {
    config: { operation: 'friends.remove' },
    schema: {
      operationId: 'removeFriend',
      tags: ['friends'],
      summary: 'End a friendship, in both directions (idempotent)',
      params: FriendshipParams,
      response: {
        200: documented(Type.Object({ personId: Type.String(), friendId: Type.String(), deleted: Type.Literal(true) }), {
          description: 'They are no longer friends, either way', example: EXAMPLES.endedFriendship
        }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request) => {
    const { id, friendId } = request.params
    await useCases.unfriend(callerOf(request), id, friendId)
    return { personId: id, friendId, deleted: true as const }
  })
}
