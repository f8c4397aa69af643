import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Person, PersonPatch } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { errorResponses } from '../schemas/error.schema.js'
import { EXAMPLES } from '../schemas/examples.js'
import {
  DeletedPersonSchema, PersonCreateOrUpdateSchema, PersonIdParams, PersonPatchSchema, PersonSchema
} from '../schemas/person.schemas.js'
import { documented } from '../schemas/response.schemas.js'
import type { RouteOptions } from '../types.js'

const PersonRef = Type.Ref(PersonSchema)
const thePerson = documented(PersonRef, { description: 'The person', example: EXAMPLES.person })

const created = (reply: FastifyReply, person: Person) =>
  reply.code(201).header('location', `/person/${person.id}`).send(person)

export const personRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id', {
    config: { operation: 'person.get' },
    schema: {
      operationId: 'getPerson',
      tags: ['people'],
      summary: 'Get one person',
      params: PersonIdParams,
      response: { 200: thePerson, ...errorResponses(404, 401, 403, 429) }
    }
  }, async (request) => useCases.getPerson(request.params.id))

  app.post('/person', {
    // With an id in the body this updates; both need people:write.
    config: { operation: 'person.create' },
    schema: {
      operationId: 'createOrUpdatePerson',
      tags: ['people'],
      summary: 'Create a person, or update one when the body has an id',
      body: PersonCreateOrUpdateSchema,
      response: {
        200: documented(PersonRef, { description: 'Updated (the body had an id): the person', example: EXAMPLES.person }),
        201: documented(PersonRef, { description: 'Created: the person', example: EXAMPLES.person, headers: ['Location'] }),
        ...errorResponses(400, 404, 401, 403, 429)
      }
    }
  }, async (request, reply) => {
    const { id, ...fields } = request.body
    if (id !== undefined) return useCases.updatePerson(id, fields)
    return created(reply, await useCases.createPerson({ ...fields, name: fields.name ?? '' }))
  })

  // PUT, PATCH and POST on /person/<id> do the same; each has its own operationId.
  const update = (operationId: string) => ({
    config: { operation: 'person.update' as const },
    schema: {
      operationId,
      tags: ['people'],
      summary: 'Update a person: fields left out keep their value, null clears an optional field',
      params: PersonIdParams,
      body: PersonPatchSchema,
      response: { 200: thePerson, ...errorResponses(400, 404, 401, 403, 429) }
    }
  })
  const applyUpdate = async (request: { params: { id: string }, body: PersonPatch }) =>
    useCases.updatePerson(request.params.id, request.body)
  app.put('/person/:id', update('replacePersonFields'), applyUpdate)
  app.patch('/person/:id', update('updatePerson'), applyUpdate)
  app.post('/person/:id', update('updatePersonByPost'), applyUpdate)

  app.delete('/person/:id', {
    config: { operation: 'person.delete' },
    schema: {
      operationId: 'deletePerson',
      tags: ['people'],
      summary: 'Delete a person with their friendships and messages',
      params: PersonIdParams,
      response: {
        200: documented(DeletedPersonSchema, { description: 'Deleted, with their friendships and messages', example: EXAMPLES.deletedPerson }),
        ...errorResponses(404, 401, 403, 429)
      }
    }
  }, async (request) => {
    await useCases.deletePerson(request.params.id)
    return { id: request.params.id, deleted: true as const }
  })
}
