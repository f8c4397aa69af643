import type { FastifyReply } from 'fastify'

/**
 * Answers with JSON text built elsewhere (by the database) as it is: Fastify
 * sends a string with a JSON content type without serializing it again. The
 * text must be what the route's response schema would have produced.
 */
export const sendJsonText = (reply: FastifyReply, json: string): FastifyReply =>
  reply.type('application/json; charset=utf-8').send(json)
