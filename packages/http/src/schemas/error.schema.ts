import { STATUS_CODES } from 'node:http'
import { Type, type Static } from '@sinclair/typebox'
import { documented, type HeaderName } from './response.schemas.js'

export const ErrorSchema = Type.Object({
  statusCode: Type.Integer({ description: 'the HTTP status, repeated' }),
  error: Type.String({ description: 'the status name, e.g. "Not Found"' }),
  message: Type.String({ description: 'what went wrong, for people' }),
  code: Type.Optional(Type.String({ description: 'a stable machine-readable name, e.g. PERSON_NOT_FOUND' })),
  requestId: Type.Optional(Type.String({ description: 'on 5xx: the id to quote when reporting it' }))
}, { $id: 'Error', description: 'Every error response has this shape' })

export type ErrorBody = Static<typeof ErrorSchema>

/** The error statuses a REST operation may declare, each with what it means here. */
const ERRORS = {
  400: { code: 'VALIDATION_FAILED', message: 'body.name must NOT have fewer than 1 characters', description: 'The request is malformed: a field of the wrong type or out of range, an unknown field, bad JSON, a wrong content type, an unreadable cursor, a malformed Idempotency-Key, a body or query string over its size limit, an Expect header other than 100-continue (EXPECTATION_FAILED).' },
  401: { code: 'UNAUTHENTICATED', message: 'credentials are required: Authorization: Bearer <token> or X-API-Key: <key>', description: 'No valid credentials: none, a malformed, expired or revoked token, or an unknown or revoked API key.', headers: ['WWW-Authenticate'] },
  403: { code: 'FORBIDDEN', message: 'POST /person needs the people:write scope', description: 'Valid credentials without the scope this operation needs.' },
  404: { code: 'PERSON_NOT_FOUND', message: 'no person with id 0192f6c4-5b7e-7cc3-a1f0-4c1d2e3f4a5b', description: 'Nothing has this id (ids that are not well formed included): PERSON_NOT_FOUND, ACCOUNT_NOT_FOUND.' },
  405: { code: 'METHOD_NOT_ALLOWED', message: 'a mutation changes data and is only accepted over POST', description: 'The method is not offered for this request.', headers: ['Allow'] },
  406: { code: 'NOT_ACCEPTABLE', message: 'this endpoint answers application/graphql-response+json or application/json', description: 'The Accept header allows none of the media types this endpoint answers.' },
  409: { code: 'IDEMPOTENCY_KEY_IN_USE', message: 'the first request with this Idempotency-Key is still running; repeat it once that one has answered', description: 'The request conflicts with the current state: the first request with this Idempotency-Key still runs (IDEMPOTENCY_KEY_IN_USE, with Retry-After), the person changed under every attempt to write it (EDIT_CONFLICT), the username is taken (USERNAME_TAKEN), the change would leave no enabled admin (LAST_ADMIN), the account is being deleted (ACCOUNT_BEING_DELETED), it owns as many live API keys as it may (TOO_MANY_KEYS), or the deployment has as many webhooks as it may (TOO_MANY_WEBHOOKS).', headers: ['Retry-After'] },
  410: { code: 'EVENTS_EXPIRED', message: 'the events after this cursor are older than the retention (EVENTS_RETENTION_DAYS) and have been deleted: start again without a cursor', description: 'The cursor points before events that have been pruned (EVENTS_RETENTION_DAYS): some are gone, so the consumer must start again.' },
  412: { code: 'PRECONDITION_FAILED', message: 'If-Match does not match the current ETag', description: 'If-Match names another version of the person: nothing was changed.' },
  422: { code: 'IDEMPOTENCY_KEY_REUSED', message: 'this Idempotency-Key was used for another request; use a new key for a new request', description: 'The Idempotency-Key was already used with another body: nothing was done.' },
  429: { code: 'RATE_LIMITED', message: 'rate limit exceeded for this account: 1000 requests per 60 s; retry in 42 s', description: 'The caller\'s budget for this window is spent (RATE_LIMITED), it already has as many requests waiting for events (`?wait=`) as one caller may (TOO_MANY_WAITS), or its account holds as many Idempotency-Keys as it may within 24 hours (TOO_MANY_IDEMPOTENCY_KEYS; IDEMPOTENCY_KEYS_PER_DAY, default 10,000).', headers: ['Retry-After'] },
  500: { code: 'INTERNAL', message: 'something went wrong on our side; quote request id 0192f6c4-0000-7000-8000-000000000000 when reporting it', description: 'An unexpected failure; the body carries the request id, the log the details.' },
  503: { code: 'OVERLOADED', message: 'the service is overloaded, retry shortly', description: 'The service is saturated or its database does not answer; try again later.', headers: ['Retry-After'] }
} as const satisfies Record<number, { code: string, message: string, description: string, headers?: readonly HeaderName[] }>

export type ErrorStatus = keyof typeof ERRORS

const ref = Type.Ref(ErrorSchema)

export const errorResponse = (status: ErrorStatus) => {
  const { code, message, description, ...rest } = ERRORS[status]
  const example: ErrorBody = {
    statusCode: status,
    error: STATUS_CODES[status] ?? 'Error',
    message,
    code,
    ...(status === 500 ? { requestId: '0192f6c4-0000-7000-8000-000000000000' } : {})
  }
  return documented(ref, { description, example, headers: 'headers' in rest ? rest.headers : [] })
}

/**
 * The error responses of the statuses a route answers with, and 500. The
 * OpenAPI document adds those the route's policy row implies (401, 403, 429)
 * and 503 to every operation (plugins/openapi.ts), so a route cannot forget them.
 */
export const errorResponses = (...statuses: ErrorStatus[]) =>
  Object.fromEntries([...statuses, 500 as const].map((status) => [status, errorResponse(status)])) as Record<number, typeof ref>
