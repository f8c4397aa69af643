import type { DomainErrorCode } from '@people-service/domain'

/** The one table from domain error codes to HTTP statuses; GraphQL shows the codes as they are. */
export const STATUS_OF: Record<DomainErrorCode, number> = {
  VALIDATION_FAILED: 400,
  INVALID_CURSOR: 400,
  SELF_FRIENDSHIP: 400,
  UNAUTHENTICATED: 401,
  INVALID_CREDENTIALS: 401,
  FORBIDDEN: 403,
  PERSON_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  API_KEY_NOT_FOUND: 404,
  // Safe retries and concurrent edits: the statuses the IETF drafts and RFC 9110 name.
  IDEMPOTENCY_KEY_IN_USE: 409,
  EDIT_CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  IDEMPOTENCY_KEY_REUSED: 422,
  ACCOUNT_NOT_FOUND: 404,
  USERNAME_TAKEN: 409,
  LAST_ADMIN: 409,
  ACCOUNT_BEING_DELETED: 409,
  TOO_MANY_KEYS: 409,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  TOO_MANY_WEBHOOKS: 409,
  // The events a cursor points after are gone (pruned): RFC 9110's "Gone".
  EVENTS_EXPIRED: 410,
  TOO_MANY_WAITS: 429,
  // An account's allowance of Idempotency-Keys, a budget over 24 hours: 429 with Retry-After, as for the request budget.
  TOO_MANY_IDEMPOTENCY_KEYS: 429,
  DEPENDENCY_UNAVAILABLE: 503
}
