import { RateLimitedError } from '../auth/rate-limits.js'
import { STATUS_CODES } from 'node:http'
import { IdempotencyAllowanceSpent, isDomainError } from '@people-service/domain'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { STATUS_OF } from '../errors/status-of.js'
import type { ErrorBody } from '../schemas/error.schema.js'
import type { SetResponseHeaders } from './response-headers.js'

export const errorBody = (statusCode: number, message: string, code?: string): ErrorBody => ({
  statusCode,
  error: STATUS_CODES[statusCode] ?? 'Error',
  message,
  ...(code ? { code } : {})
})

/** RFC 9110: a 401 names the scheme that would be accepted. */
export const WWW_AUTHENTICATE = 'Bearer realm="people-service"'

// Fastify reports these client errors with statuses the contract folds into 400.
const AS_BAD_REQUEST: Record<string, string> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_CONTENT_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_JSON_BODY: 'MALFORMED_JSON'
}

export const clientErrorOf = (error: FastifyError): { status: number, code: string, message: string } | undefined => {
  if (error.validation) return { status: 400, code: 'VALIDATION_FAILED', message: error.message }
  const code = AS_BAD_REQUEST[error.code]
  if (code === 'UNSUPPORTED_CONTENT_TYPE') return { status: 400, code, message: 'the body must be JSON, sent as application/json' }
  if (code) return { status: 400, code, message: error.message }
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return { status: error.statusCode, code: error.code ?? 'BAD_REQUEST', message: error.message }
  }
  return undefined
}

/**
 * The router's one error of its own (with no cap on path segments): a URL
 * whose percent-encoding does not decode is malformed (400). It comes before
 * any hook runs, so the headers every response carries are set here.
 */
export const answerBadUrl = (setHeaders: SetResponseHeaders) =>
  (_error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    setHeaders(request, reply)
    reply.code(400).send(errorBody(400, 'the URL is not valid', 'BAD_URL'))
  }

/**
 * One error handler for the whole app: domain errors by the status table,
 * client errors with their message, and anything else as a bare 500 whose
 * details go to the log only (no stack, SQL or path in the body).
 */
export const installErrorHandling = (app: FastifyInstance): void => {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (isDomainError(error)) {
      const status = STATUS_OF[error.code]
      if (status >= 500) request.log.warn({ code: error.code }, error.message)
      if (status === 401) reply.header('www-authenticate', WWW_AUTHENTICATE)
      // The first request with that key answers within the request timeout.
      if (error.code === 'IDEMPOTENCY_KEY_IN_USE') reply.header('retry-after', '1')
      // A wait for events ends within EVENT_LIMITS.maxWaitSeconds.
      if (error.code === 'TOO_MANY_WAITS') reply.header('retry-after', '5')
      if (error instanceof IdempotencyAllowanceSpent) reply.header('retry-after', error.retryAfterSeconds)
      return reply.code(status).send(errorBody(status, error.message, error.code))
    }
    const client = clientErrorOf(error)
    // A refusal thrown away from the reply (the password hashing queue's) says when to retry.
    if (error instanceof RateLimitedError && !reply.hasHeader('retry-after')) reply.header('retry-after', error.retryAfter)
    if (client) return reply.code(client.status).send(errorBody(client.status, client.message, client.code))
    request.log.error({ err: error }, 'unexpected error')
    return reply.code(500).send({
      ...errorBody(500, `something went wrong on our side; quote request id ${request.id} when reporting it`, 'INTERNAL'),
      requestId: request.id
    })
  })

  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorBody(404, `no route ${request.method} ${request.url.split('?')[0]}`, 'ROUTE_NOT_FOUND'))
  })
}
