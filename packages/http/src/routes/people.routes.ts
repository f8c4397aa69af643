import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { LIST_LIMITS } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { callerOf, type Access } from '../plugins/access.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { PeopleQuery } from '../schemas/list.schemas.js'
import { PersonSummarySchema } from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import { ENTRY_BYTES, entriesWithin } from '../response-size.js'
import { takeTurn } from '../turns.js'
import type { RouteOptions } from '../types.js'
import { sendJsonText } from './json-text.js'
import { linkNext } from './links.js'

/**
 * A name search that reads the names a range at a time (the SQLite and
 * PostgreSQL adapters, for needles their trigram indexes do not serve)
 * pays one more request for each range after the first, before reading
 * it, and waits its turn with the other big reads.
 */
const payForEachRange = (limits: Access['limits'], request: FastifyRequest, reply: FastifyReply) => {
  const caller = callerOf(request)
  return async (): Promise<void> => {
    await limits.charge(request, reply, caller, 1)
    await takeTurn()
  }
}

export const peopleRoutes: FastifyPluginAsyncTypebox<RouteOptions & { access: Access, maxResponseBytes: number }> = async (app, { useCases, access, maxResponseBytes }) => {
  // A page ends early rather than answer more than MAX_RESPONSE_BYTES at worst; Link points at the rest.
  const mostPerPage = entriesWithin(maxResponseBytes, ENTRY_BYTES.personSummary, Number.MAX_SAFE_INTEGER)
  app.get('/people', {
    config: { operation: 'people.list' },
    schema: {
      operationId: 'listPeople',
      tags: ['people'],
      summary: 'List people, ordered by id',
      description: 'Keyset pagination: follow the `Link: <…>; rel="next"` header while it is present. ' +
        'A `name` search that the name index cannot serve (one or two characters, or a string that very many names hold) ' +
        'reads the people in id order, 20,000 at a time, until the page is full: each range after the first counts as one more ' +
        "request against the caller's budget (the `RateLimit-*` headers show it), and a budget that runs out during the search answers 429.",
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
    const search = name === undefined ? {} : { name, beforeNextRange: payForEachRange(access.limits, request, reply) }
    const page = await useCases.listPeopleJson({ limit: Math.min(limit ?? LIST_LIMITS.people.default, mostPerPage), ...(cursor !== undefined ? { cursor } : {}), ...search })
    linkNext(request, reply, page.next)
    return sendJsonText(reply, page.json)
  })
}
