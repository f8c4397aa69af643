import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Person, PersonPatch } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { visiblePart, type OpenPart } from '../auth/policy.js'
import { clientHasCurrent, etagOf, versionConditionOf } from '../conditional/entity-tags.js'
import { idempotentRequestOf, replay, storedResponse } from '../idempotency/idempotency-key.js'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import { ConditionalReadHeaders, ConditionalWriteHeaders, CreateOrUpdateHeaders } from '../schemas/headers.schemas.js'
import {
  DeletedPersonSchema, PersonCreateOrUpdateSchema, PersonIdParams, PersonIdSchema, PersonPatchSchema, PersonSchema
} from '../schemas/person.schemas.js'
import { callerOf } from '../plugins/access.js'
import { documented, withoutBody } from '../schemas/response.schemas.js'
import { takeTurn } from '../turns.js'
import type { RouteOptions } from '../types.js'

const PersonRef = Type.Ref(PersonSchema)
const thePerson = documented(PersonRef, { description: 'The person', example: EXAMPLES.person, headers: ['ETag'] })
/** What a write answers: the person, or only their id to a caller without people:read (auth/policy.ts, VISIBILITY). */
const WrittenPerson = Type.Union([PersonRef, Type.Ref(PersonIdSchema)])
const theWrittenPerson = (description: string, headers: Parameters<typeof documented>[1]['headers']) =>
  documented(WrittenPerson, { description: `${description}; \`{ "id" }\` alone to a caller without people:read`, example: EXAMPLES.person, ...(headers ? { headers } : {}) })

/** What a caller may see of a person they wrote. */
const seenBy = (request: FastifyRequest, person: Person): Person | OpenPart<Person, 'Person'> => visiblePart(callerOf(request), 'Person', person)

/** Every response that returns a person carries its ETag, whatever of the person the caller may see. */
const tagged = (request: FastifyRequest, reply: FastifyReply, person: Person): Person | OpenPart<Person, 'Person'> => {
  reply.header('etag', etagOf(person))
  return seenBy(request, person)
}

const createdHeaders = (person: Person): Record<string, string> =>
  ({ location: `/person/${person.id}`, etag: etagOf(person) })

export const personRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id', {
    config: { operation: 'person.get' },
    schema: {
      operationId: 'getPerson',
      tags: ['people'],
      summary: 'Get one person',
      params: PersonIdParams,
      headers: ConditionalReadHeaders,
      response: {
        200: thePerson,
        304: withoutBody({ description: 'Not Modified: the copy named by If-None-Match is current; no body', headers: ['ETag'] }),
        ...errorResponses(404, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const person = await useCases.getPerson(request.params.id)
    const etag = etagOf(person)
    reply.header('etag', etag)
    const ifNoneMatch = request.headers['if-none-match']
    // No payload at all: a null one would be serialized and its length announced on a response that has no body.
    if (ifNoneMatch !== undefined && clientHasCurrent(ifNoneMatch, etag)) return reply.code(304).send()
    return person
  })

  app.post('/person', {
    // With an id in the body this updates; both need people:write.
    config: { operation: 'person.create' },
    schema: {
      operationId: 'createOrUpdatePerson',
      tags: ['people'],
      summary: 'Create a person, or update one when the body has an id',
      description: 'Idempotency-Key applies to creation: a repeat gets the first answer again. ' +
        'A repeat while the first still runs is 409 (with Retry-After); the same key with another body is 422. ' +
        'If-Match applies to an update: 412, and nothing changed, when the person is no longer at that ETag.',
      headers: CreateOrUpdateHeaders,
      body: PersonCreateOrUpdateSchema,
      response: {
        200: theWrittenPerson('Updated (the body had an id): the person', ['ETag']),
        201: theWrittenPerson('Created: the person (again, with Idempotent-Replayed, for a repeated Idempotency-Key)', ['Location', 'ETag', 'Idempotent-Replayed']),
        ...errorResponses(400, 404, 401, 403, 409, 412, 422, 429)
      }
    }
  }, async (request, reply) => {
    const { id, ...fields } = request.body
    if (id !== undefined) return tagged(request, reply, await useCases.updatePerson(callerOf(request), id, fields, versionConditionOf(request.headers['if-match'])))
    const input = { ...fields, name: fields.name ?? '' }
    const key = request.headers['idempotency-key']
    if (key === undefined) {
      const person = await useCases.createPerson(callerOf(request), input)
      return reply.code(201).headers(createdHeaders(person)).send(seenBy(request, person))
    }
    // What is stored is what this caller was shown, and a replay shows no more than the caller may see now.
    const outcome = await useCases.createPersonOnce(callerOf(request), idempotentRequestOf(request, key), input,
      (person) => storedResponse(201, createdHeaders(person), seenBy(request, person)))
    if (outcome.replayed) return replay(reply, outcome.response, (body) => visiblePart(callerOf(request), 'Person', body as Person))
    return reply.code(201).headers(createdHeaders(outcome.result)).send(seenBy(request, outcome.result))
  })

  // PUT, PATCH and POST on /person/<id> do the same; each has its own operationId.
  const update = (operationId: string) => ({
    config: { operation: 'person.update' as const },
    schema: {
      operationId,
      tags: ['people'],
      summary: 'Update a person: fields left out keep their value, null clears an optional field',
      params: PersonIdParams,
      headers: ConditionalWriteHeaders,
      body: PersonPatchSchema,
      response: { 200: theWrittenPerson('The person', ['ETag']), ...errorResponses(400, 404, 401, 403, 409, 412, 429) }
    }
  })
  const applyUpdate = async (request: FastifyRequest<{ Params: { id: string }, Body: PersonPatch }>, reply: FastifyReply) =>
    tagged(request, reply, await useCases.updatePerson(callerOf(request), request.params.id, request.body, versionConditionOf(request.headers['if-match'])))
  app.put('/person/:id', update('replacePersonFields'), applyUpdate)
  app.patch('/person/:id', update('updatePerson'), applyUpdate)
  app.post('/person/:id', update('updatePersonByPost'), applyUpdate)

  app.delete('/person/:id', {
    config: { operation: 'person.delete' },
    schema: {
      operationId: 'deletePerson',
      tags: ['people'],
      summary: 'Delete a person with their friendships and messages',
      description: 'With `If-Match`, only the person at that version is deleted (412 otherwise, nothing changed). ' +
        'On the embedded SQLite database a person with more than 500 messages or 2,000 friends loses them a step at a time, ' +
        'taking turns with other requests: until the answer their inbox and friend list shrink, and a deletion cut short ' +
        '(the server stopped) leaves the person with fewer of them; deleting again finishes it. `If-Match` is checked with the first step, which gives the person a new version: an edit conditional on the old one gets 412 from then on. The deletion takes effect at its end: an edit (of the new version), a message or a friendship made meanwhile goes with the person.',
      params: PersonIdParams,
      headers: ConditionalWriteHeaders,
      response: {
        200: documented(DeletedPersonSchema, { description: 'Deleted, with their friendships and messages', example: EXAMPLES.deletedPerson }),
        ...errorResponses(404, 401, 403, 409, 412, 429)
      }
    }
  }, async (request) => {
    await useCases.deletePerson(callerOf(request), request.params.id, { condition: versionConditionOf(request.headers['if-match']), beforeNextStep: takeTurn })
    return { id: request.params.id, deleted: true as const }
  })
}
