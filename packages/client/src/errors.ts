/** The error body every failed response of the service carries. */
interface ErrorBody {
  statusCode?: number
  error?: string
  message?: string
  code?: string
  requestId?: string
}

/** Codes the client gives failures that have no response of the service. */
export type TransportErrorCode = 'NETWORK_ERROR' | 'TIMEOUT' | 'INVALID_RESPONSE'

/**
 * Every failure of a call: an error response of the service (`statusCode`,
 * its `code` when it has one, and `requestId` from `X-Request-Id` to quote when
 * reporting it), or no usable response at all (`statusCode` 0, `code` one of
 * TransportErrorCode, the platform's error as `cause`).
 */
export class PeopleServiceError extends Error {
  override readonly name: string = 'PeopleServiceError'
  readonly statusCode: number
  readonly code: string | undefined
  readonly requestId: string | undefined
  /** The error body as the service sent it, when it sent one. */
  readonly body: unknown

  constructor (message: string, details: { statusCode: number, code?: string | undefined, requestId?: string | undefined, body?: unknown, cause?: unknown }) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause })
    this.statusCode = details.statusCode
    this.code = details.code
    this.requestId = details.requestId
    this.body = details.body
  }

  /** The error an error response stands for: 412 as PreconditionFailedError. */
  static fromResponse (statusCode: number, requestId: string | undefined, body: unknown): PeopleServiceError {
    const fields: ErrorBody = typeof body === 'object' && body !== null ? body : {}
    const message = typeof fields.message === 'string' && fields.message !== '' ? fields.message : `the service answered ${statusCode}`
    const details = { statusCode, code: typeof fields.code === 'string' ? fields.code : undefined, requestId: requestId ?? fields.requestId, body }
    return statusCode === 412 ? new PreconditionFailedError(message, details) : new PeopleServiceError(message, details)
  }
}

/**
 * 412: the resource is no longer at the ETag given as `ifMatch` (or `If-Match: *`
 * named one that does not exist); nothing was changed. Read it again and decide.
 */
export class PreconditionFailedError extends PeopleServiceError {
  override readonly name: string = 'PreconditionFailedError'
}

/** A webhook request whose signature, timestamp or headers do not hold. */
export class WebhookVerificationError extends Error {
  override readonly name: string = 'WebhookVerificationError'
}
