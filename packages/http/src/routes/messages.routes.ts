import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { InboxQuery } from '../schemas/list.schemas.js'
import { MessageSchema, SendMessageSchema } from '../schemas/message.schemas.js'
import { PersonIdParams } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { callerOf } from '../plugins/access.js'
import type { RouteOptions } from '../types.js'
import { linkNext } from './links.js'

const MessageRef = Type.Ref(MessageSchema)

export const messagesRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.post('/message', {
    config: { operation: 'message.send' },
    schema: {
      operationId: 'sendMessage',
      tags: ['messages'],
      summary: 'Send a message to a person',
      body: SendMessageSchema,
      response: {
        201: documented(MessageRef, { description: 'Sent: the message', example: EXAMPLES.message, headers: ['Location'] }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const message = await useCases.sendMessage({ ...request.body, senderId: callerOf(request).id })
    return reply.code(201).header('location', `/message/${message.id}`).send(message)
  })

  app.get('/message/:id', {
    config: { operation: 'message.get' },
    schema: {
      operationId: 'getMessage',
      tags: ['messages'],
      summary: 'Get one message',
      params: PersonIdParams,
      response: { 200: documented(MessageRef, { description: 'The message', example: EXAMPLES.message }), ...errorResponses(404, 401, 403, 429) }
    }
  }, async (request) => useCases.getMessage(request.params.id))

  app.get('/person/:id/messages', {
    config: { operation: 'messages.list' },
    schema: {
      operationId: 'listMessages',
      tags: ['messages'],
      summary: 'Messages sent to a person, newest first',
      params: PersonIdParams,
      querystring: InboxQuery,
      response: {
        200: documented(Type.Array(MessageRef), { description: 'A page of messages, newest first', example: [EXAMPLES.message], headers: ['Link'] }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor } = request.query
    const page = await useCases.listInbox(request.params.id, { limit, ...(cursor !== undefined ? { cursor } : {}) })
    linkNext(request, reply, page.next)
    return page.items
  })
}
