import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../schemas/error.schema.js'
import { FriendsQuery } from '../schemas/list.schemas.js'
import { PersonIdParams, PersonSummarySchema } from '../schemas/person.schemas.js'
import type { RouteOptions } from '../types.js'

const FriendshipParams = Type.Object({ id: Type.String(), friendId: Type.String() })

export const friendsRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id/friends', {
    config: { operation: 'friends.list' },
    schema: {
      tags: ['friends'],
      summary: 'List the friends of a person, ordered by id',
      params: PersonIdParams,
      querystring: FriendsQuery,
      response: { 200: Type.Array(Type.Ref(PersonSummarySchema)), ...errorResponses(400, 404, 401, 403, 429) }
    }
  }, async (request) => useCases.listFriends(request.params.id, request.query.limit))

  app.put('/person/:id/friends/:friendId', {
    config: { operation: 'friends.add' },
    schema: {
      tags: ['friends'],
      summary: 'Make two people friends of each other (idempotent)',
      params: FriendshipParams,
      response: { 200: Type.Object({ personId: Type.String(), friendId: Type.String() }), ...errorResponses(400, 404, 401, 403, 429) }
    }
  }, async (request) => {
    const { id, friendId } = request.params
    await useCases.befriend(id, friendId)
    return { personId: id, friendId }
  })

  app.delete('/person/:id/friends/:friendId', {
    config: { operation: 'friends.remove' },
    schema: {
      tags: ['friends'],
      summary: 'End a friendship, in both directions (idempotent)',
      params: FriendshipParams,
      response: {
        200: Type.Object({ personId: Type.String(), friendId: Type.String(), deleted: Type.Literal(true) }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request) => {
    const { id, friendId } = request.params
    await useCases.unfriend(id, friendId)
    return { personId: id, friendId, deleted: true as const }
  })
}
