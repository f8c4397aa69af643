import { Type } from '@sinclair/typebox'

/*
 * The request headers routes read, declared in their schemas: checked at
 * the edge (a malformed Idempotency-Key is a 400 before anything runs) and
 * listed in the OpenAPI document. Node gives header names in lower case.
 * The response headers are described in response.schemas.ts (HEADERS).
 */

const IdempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  // Visible ASCII characters (RFC 9110 VCHAR): no spaces, no control characters.
  pattern: '^[\\x21-\\x7E]+$',
  description: 'Makes a repeat of this request safe: the same caller, key and body within 24 hours ' +
    'get the first answer again (with Idempotent-Replayed: true) and nothing is created twice. ' +
    '1 to 255 visible ASCII characters; a new key for every new request.'
})

export const CreateHeaders = Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKey) })

export const ConditionalReadHeaders = Type.Object({
  'if-none-match': Type.Optional(Type.String({ description: 'The ETag of the copy the client holds: 304, no body, while it is current' }))
})

export const ConditionalWriteHeaders = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'The ETag the change is meant for: 412 PRECONDITION_FAILED, and nothing changed, when the person is no longer at it' }))
})

/** POST /person: Idempotency-Key when it creates, If-Match when the body's id makes it an update. */
export const CreateOrUpdateHeaders = Type.Composite([CreateHeaders, ConditionalWriteHeaders])
