import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Person, PersonPatch } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { clientHasCurrent, etagOf, versionConditionOf } from '../conditional/entity-tags.js'
import { idempotentRequestOf, replay, storedResponse } from '../idempotency/idempotency-key.js'
import { errorResponses } from '../schemas/error.schema.js'
import {
  ConditionalReadHeaders, ConditionalWriteHeaders, CREATED_HEADERS, CreateHeaders, ETAG_HEADER
} from '../schemas/headers.schemas.js'
import {
  DeletedPersonSchema, PersonCreateOrUpdateSchema, PersonIdParams, PersonPatchSchema, PersonSchema
} from '../schemas/person.schemas.js'
import type { RouteOptions } from '../types.js'

const TaggedPerson = Type.Ref(PersonSchema, { description: 'The person', headers: ETAG_HEADER })
const CreatedPerson = Type.Ref(PersonSchema, { description: 'The person created', headers: CREATED_HEADERS })
const NotModified = Type.Null({ description: 'Not Modified: the copy named by If-None-Match is current; no body', headers: ETAG_HEADER })

/** Every response that returns a person carries its ETag. */
const tagged = (reply: FastifyReply, person: Person): Person => {
  reply.header('etag', etagOf(person))
  return person
}

const createdHeaders = (person: Person): Record<string, string> =>
  ({ location: `/person/${person.id}`, etag: etagOf(person) })

export const personRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id', {
    config: { operation: 'person.get' },
    schema: {
      tags: ['people'],
      summary: 'Get one person',
      params: PersonIdParams,
      headers: ConditionalReadHeaders,
      response: { 200: TaggedPerson, 304: NotModified, ...errorResponses(404, 401, 403, 429) }
    }
  }, async (request, reply) => {
    const person = await useCases.getPerson(request.params.id)
    const etag = etagOf(person)
    reply.header('etag', etag)
    const ifNoneMatch = request.headers['if-none-match']
    if (ifNoneMatch !== undefined && clientHasCurrent(ifNoneMatch, etag)) return reply.code(304).send(null)
    return person
  })

  app.post('/person', {
    // With an id in the body this updates; both need people:write.
    config: { operation: 'person.create' },
    schema: {
      tags: ['people'],
      summary: 'Create a person, or update one when the body has an id',
      description: 'Idempotency-Key applies to creation: a repeat gets the first answer again. ' +
        'A repeat while the first still runs is 409 (with Retry-After); the same key with another body is 422.',
      headers: CreateHeaders,
      body: PersonCreateOrUpdateSchema,
      response: { 200: TaggedPerson, 201: CreatedPerson, ...errorResponses(400, 404, 401, 403, 409, 422, 429) }
    }
  }, async (request, reply) => {
    const { id, ...fields } = request.body
    if (id !== undefined) return tagged(reply, await useCases.updatePerson(id, fields))
    const input = { ...fields, name: fields.name ?? '' }
    const key = request.headers['idempotency-key']
    if (key === undefined) {
      const person = await useCases.createPerson(input)
      return reply.code(201).headers(createdHeaders(person)).send(person)
    }
    const outcome = await useCases.createPersonOnce(idempotentRequestOf(request, key), input,
      (person) => storedResponse(201, createdHeaders(person), person))
    if (outcome.replayed) return replay(reply, outcome.response)
    return reply.code(201).headers(createdHeaders(outcome.result)).send(outcome.result)
  })

  const update = {
    config: { operation: 'person.update' as const },
    schema: {
      tags: ['people'],
      summary: 'Update a person: fields left out keep their value, null clears an optional field',
      params: PersonIdParams,
      headers: ConditionalWriteHeaders,
      body: PersonPatchSchema,
      response: { 200: TaggedPerson, ...errorResponses(400, 404, 401, 403, 409, 412, 429) }
    }
  }
  const applyUpdate = async (request: FastifyRequest<{ Params: { id: string }, Body: PersonPatch }>, reply: FastifyReply) =>
    tagged(reply, await useCases.updatePerson(request.params.id, request.body, versionConditionOf(request.headers['if-match'])))
  app.put('/person/:id', update, applyUpdate)
  app.patch('/person/:id', update, applyUpdate)
  app.post('/person/:id', update, applyUpdate)

  app.delete('/person/:id', {
    config: { operation: 'person.delete' },
    schema: {
      tags: ['people'],
      summary: 'Delete a person with their friendships and messages',
      params: PersonIdParams,
      headers: ConditionalWriteHeaders,
      response: { 200: DeletedPersonSchema, ...errorResponses(404, 401, 403, 409, 412, 429) }
    }
  }, async (request) => {
    await useCases.deletePerson(request.params.id, versionConditionOf(request.headers['if-match']))
    return { id: request.params.id, deleted: true as const }
  })
}
