/**
 * Every failure the domain can report, by a stable machine-readable code.
 * Adapters map codes to their own vocabulary (HTTP statuses, GraphQL
 * `extensions.code`); the domain never speaks of transports.
 */
export type DomainErrorCode =
  | 'VALIDATION_FAILED'
  | 'PERSON_NOT_FOUND'
  | 'MESSAGE_NOT_FOUND'
  | 'SELF_FRIENDSHIP'
  | 'INVALID_CURSOR'
  | 'DEPENDENCY_UNAVAILABLE'
  | 'UNAUTHENTICATED'
  | 'INVALID_CREDENTIALS'
  | 'FORBIDDEN'
  | 'USERNAME_TAKEN'
  | 'API_KEY_NOT_FOUND'
  | 'PRECONDITION_FAILED'
  | 'EDIT_CONFLICT'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'ACCOUNT_NOT_FOUND'
  | 'LAST_ADMIN'
  | 'ACCOUNT_BEING_DELETED'
  | 'TOO_MANY_KEYS'
  | 'WEBHOOK_NOT_FOUND'
  | 'DELIVERY_NOT_FOUND'
  | 'TOO_MANY_WEBHOOKS'
  | 'EVENTS_EXPIRED'
  | 'TOO_MANY_WAITS'
  | 'TOO_MANY_IDEMPOTENCY_KEYS'

export class DomainError extends Error {
  readonly code: DomainErrorCode
  /** The input field the error is about, when there is one. */
  readonly field: string | undefined

  constructor (code: DomainErrorCode, message: string, field?: string) {
    super(message)
    this.name = 'DomainError'
    this.code = code
    this.field = field
  }
}

export const isDomainError = (error: unknown): error is DomainError =>
  error instanceof DomainError

export const validationError = (field: string, message: string): DomainError =>
  new DomainError('VALIDATION_FAILED', `${field} ${message}`, field)

/** Longest id quoted whole in a message: every id the service issues is 36 characters. */
const QUOTED_ID_LENGTH = 64

/**
 * An id as a message quotes it: whole when it could be one, else its start.
 * Whatever a client sends as an id (a GraphQL variable can hold a megabyte)
 * comes back no longer than this.
 */
const quotedId = (id: string): string =>
  id.length <= QUOTED_ID_LENGTH ? JSON.stringify(id) : `${JSON.stringify(id.slice(0, QUOTED_ID_LENGTH))}… (${id.length} characters)`

export const personNotFound = (id: string): DomainError =>
  new DomainError('PERSON_NOT_FOUND', `no person with id ${quotedId(id)}`)

export const messageNotFound = (id: string): DomainError =>
  new DomainError('MESSAGE_NOT_FOUND', `no message with id ${quotedId(id)}`)

export const unauthenticated = (message = 'credentials are required: send Authorization: Bearer <token> or X-API-Key: <key>'): DomainError =>
  new DomainError('UNAUTHENTICATED', message)

export const forbidden = (message: string): DomainError => new DomainError('FORBIDDEN', message)

export const apiKeyNotFound = (id: string): DomainError =>
  new DomainError('API_KEY_NOT_FOUND', `no API key with id ${quotedId(id)}`)

export const preconditionFailed = (id: string): DomainError =>
  new DomainError('PRECONDITION_FAILED', `the person ${JSON.stringify(id)} has changed since the version named; read it again`)
export const accountNotFound = (id: string): DomainError =>
  new DomainError('ACCOUNT_NOT_FOUND', `no account with id ${quotedId(id)}`)

export const lastAdmin = (): DomainError =>
  new DomainError('LAST_ADMIN', 'the last enabled admin cannot be deleted, disabled or given another role')

export const accountBeingDeleted = (id: string): DomainError =>
  new DomainError('ACCOUNT_BEING_DELETED', `the account ${quotedId(id)} is being deleted; delete it again to finish`)

export const usernameTaken = (username: string): DomainError =>
  new DomainError('USERNAME_TAKEN', `the username ${JSON.stringify(username)} is taken`, 'username')

export const tooManyKeys = (max: number): DomainError =>
  new DomainError('TOO_MANY_KEYS', `an account may own at most ${max} live API keys; revoke one before creating another`)

/** Unknown username and wrong password alike, so a response never tells which usernames exist. */
export const invalidCredentials = (message = 'wrong username or password'): DomainError =>
  new DomainError('INVALID_CREDENTIALS', message)

export const webhookNotFound = (id: string): DomainError =>
  new DomainError('WEBHOOK_NOT_FOUND', `no webhook with id ${quotedId(id)}`)

export const deliveryNotFound = (id: string): DomainError =>
  new DomainError('DELIVERY_NOT_FOUND', `no delivery with id ${quotedId(id)} of this webhook`)

export const tooManyWebhooks = (max: number): DomainError =>
  new DomainError('TOO_MANY_WEBHOOKS', `a deployment may have at most ${max} webhooks; delete one before creating another`)
