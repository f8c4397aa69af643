import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LIST_LIMITS, type Message } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import { idempotentRequestOf, replay, storedResponse } from '../idempotency/idempotency-key.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { CreateHeaders } from '../schemas/headers.schemas.js'
import { InboxQuery } from '../schemas/list.schemas.js'
import { MessageSchema, SendMessageSchema } from '../schemas/message.schemas.js'
import { PersonIdParams } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { callerOf } from '../plugins/access.js'
import type { RouteOptions } from '../types.js'
import { ENTRY_BYTES, entriesWithin } from '../response-size.js'
import { linkNext } from './links.js'

const MessageRef = Type.Ref(MessageSchema)

const locationOf = (message: Message): string => `/message/${message.id}`

export const messagesRoutes: FastifyPluginAsyncTypebox<RouteOptions & { maxResponseBytes: number }> = async (app, { useCases, maxResponseBytes }) => {
  // A page of large messages ends early rather than answer more than MAX_RESPONSE_BYTES at worst; Link points at the rest.
  const mostPerPage = entriesWithin(maxResponseBytes, ENTRY_BYTES.message, Number.MAX_SAFE_INTEGER)
  app.post('/message', {
    config: { operation: 'message.send' },
    schema: {
      operationId: 'sendMessage',
      tags: ['messages'],
      summary: 'Send a message to a person',
      description: 'With an Idempotency-Key a repeat gets the first answer again and sends nothing. ' +
        'A repeat while the first still runs is 409 (with Retry-After); the same key with another body is 422.',
      headers: CreateHeaders,
      body: SendMessageSchema,
      response: {
        201: documented(MessageRef, { description: 'Sent: the message (again, with Idempotent-Replayed, for a repeated Idempotency-Key)', example: EXAMPLES.message, headers: ['Location', 'Idempotent-Replayed'] }),
        ...errorResponses(400, 404, 401, 403, 409, 422, 429)
      }
    }
  }, async (request, reply) => {
    const input = request.body
    const caller = callerOf(request)
    const key = request.headers['idempotency-key']
    if (key === undefined) {
      const message = await useCases.sendMessage(caller, input)
      return reply.code(201).header('location', locationOf(message)).send(message)
    }
    const outcome = await useCases.sendMessageOnce(caller, idempotentRequestOf(request, key), input,
      (message) => storedResponse(201, { location: locationOf(message) }, message))
    if (outcome.replayed) return replay(reply, outcome.response)
    return reply.code(201).header('location', locationOf(outcome.result)).send(outcome.result)
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
    const page = await useCases.listInbox(request.params.id, { limit: Math.min(limit ?? LIST_LIMITS.inbox.default, mostPerPage), ...(cursor !== undefined ? { cursor } : {}) })
    linkNext(request, reply, page.next)
    return page.items
  })
}
