import { PERSON_LIMITS } from '@people-service/domain'
import { Type, type Static } from '@sinclair/typebox'
import { Nullable, Timestamp } from './nullable.js'

const AddressField = Nullable(Type.String({ maxLength: PERSON_LIMITS.addressFieldLength }))

export const AddressSchema = Type.Object({
  street: Type.Optional(AddressField),
  city: Type.Optional(AddressField),
  country: Type.Optional(AddressField)
}, { additionalProperties: false })

const personFields = {
  name: Type.String({ minLength: 1, maxLength: PERSON_LIMITS.nameLength }),
  age: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: PERSON_LIMITS.maxAge }))),
  email: Type.Optional(Nullable(Type.String({ maxLength: PERSON_LIMITS.emailLength, format: 'email' }))),
  address: Type.Optional(Nullable(AddressSchema))
}

export const PersonIdParams = Type.Object({ id: Type.String() })

/** Body of PUT/PATCH/POST /person/<id>: every field optional, `null` clears. */
export const PersonPatchSchema = Type.Object({
  ...personFields,
  name: Type.Optional(personFields.name)
}, { additionalProperties: false, $id: 'PersonPatch' })

/** Body of POST /person: without `id` it creates (name required), with `id` it updates. */
export const PersonCreateOrUpdateSchema = Type.Object({
  id: Type.Optional(Type.String({ description: 'present: update this person' })),
  ...PersonPatchSchema.properties
}, {
  additionalProperties: false,
  $id: 'PersonCreateOrUpdate',
  // The properties are named again beside `required` so that each subschema
  // stands on its own for OpenAPI linters; they add no constraint.
  if: { not: { properties: { id: {} }, required: ['id'] } },
  then: { properties: { name: {} }, required: ['name'] }
})

export const PersonSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  age: Nullable(Type.Integer()),
  email: Nullable(Type.String()),
  address: Nullable(Type.Object({
    street: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String())
  })),
  createdAt: Timestamp,
  updatedAt: Timestamp
}, { $id: 'Person' })

/** A person as a caller without people:read sees one it wrote: the id alone. */
export const PersonIdSchema = Type.Object({ id: Type.String() }, { $id: 'PersonId' })

export const PersonSummarySchema = Type.Object({ id: Type.String(), name: Type.String() }, { $id: 'PersonSummary' })

export const DeletedPersonSchema = Type.Object({ id: Type.String(), deleted: Type.Literal(true) })

export type PersonPatchBody = Static<typeof PersonPatchSchema>
export type PersonCreateOrUpdateBody = Static<typeof PersonCreateOrUpdateSchema>
