import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { Person, PersonPatch } from '@people-service/domain'
import { Type } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { errorResponses } from '../schemas/error.schema.js'
import {
  DeletedPersonSchema, PersonCreateOrUpdateSchema, PersonIdParams, PersonPatchSchema, PersonSchema
} from '../schemas/person.schemas.js'
import type { RouteOptions } from '../types.js'

const PersonRef = Type.Ref(PersonSchema)

const created = (reply: FastifyReply, person: Person) =>
  reply.code(201).header('location', `/person/${person.id}`).send(person)

export const personRoutes: FastifyPluginAsyncTypebox<RouteOptions> = async (app, { useCases }) => {
  app.get('/person/:id', {
    config: { operation: 'person.get' },
    schema: {
      tags: ['people'],
      summary: 'Get one person',
      params: PersonIdParams,
      response: { 200: PersonRef, ...errorResponses(404, 401, 403, 429) }
    }
  }, async (request) => useCases.getPerson(request.params.id))

  app.post('/person', {
    // With an id in the body this updates; both need people:write.
    config: { operation: 'person.create' },
    schema: {
      tags: ['people'],
      summary: 'Create a person, or update one when the body has an id',
      body: PersonCreateOrUpdateSchema,
      response: { 200: PersonRef, 201: PersonRef, ...errorResponses(400, 404, 401, 403, 429) }
    }
  }, async (request, reply) => {
    const { id, ...fields } = request.body
    if (id !== undefined) return useCases.updatePerson(id, fields)
    return created(reply, await useCases.createPerson({ ...fields, name: fields.name ?? '' }))
  })

  const update = {
    config: { operation: 'person.update' as const },
    schema: {
      tags: ['people'],
      summary: 'Update a person: fields left out keep their value, null clears an optional field',
      params: PersonIdParams,
      body: PersonPatchSchema,
      response: { 200: PersonRef, ...errorResponses(400, 404, 401, 403, 429) }
    }
  }
  const applyUpdate = async (request: { params: { id: string }, body: PersonPatch }) =>
    useCases.updatePerson(request.params.id, request.body)
  app.put('/person/:id', update, applyUpdate)
  app.patch('/person/:id', update, applyUpdate)
  app.post('/person/:id', update, applyUpdate)

  app.delete('/person/:id', {
    config: { operation: 'person.delete' },
    schema: {
      tags: ['people'],
      summary: 'Delete a person with their friendships and messages',
      params: PersonIdParams,
      response: { 200: DeletedPersonSchema, ...errorResponses(404, 401, 403, 429) }
    }
  }, async (request) => {
    await useCases.deletePerson(request.params.id)
    return { id: request.params.id, deleted: true as const }
  })
}
