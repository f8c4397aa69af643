import { Type, type Static } from '@sinclair/typebox'

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'the HTTP status, repeated' }),
  error: Type.String({ description: 'the status name, e.g. "Not Found"' }),
  message: Type.String({ description: 'what went wrong, for people' }),
  code: Type.Optional(Type.String({ description: 'a stable machine-readable name, e.g. PERSON_NOT_FOUND' })),
  requestId: Type.Optional(Type.String({ description: 'on 5xx: the id to quote when reporting it' }))
}, { $id: 'Error', description: 'Every error response has this shape' })

export type ErrorBody = Static<typeof ErrorSchema>

const ref = Type.Ref(ErrorSchema)

/** The response schemas of the error statuses a route can answer with. */
export const errorResponses = (...statuses: Array<400 | 401 | 403 | 404 | 409 | 429 | 503>) =>
  Object.fromEntries([...statuses, 500].map((status) => [status, ref])) as Record<number, typeof ref>
