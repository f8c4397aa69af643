import { isDomainError } from '@people-service/domain'
import type { FastifyBaseLogger, FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { GraphQLError, type ExecutionResult, type GraphQLFormattedError } from 'graphql'
import { STATUS_OF } from '../errors/status-of.js'
import { clientErrorOf, WWW_AUTHENTICATE } from '../plugins/errors.js'
import { contentTypeOf, MEDIA_TYPES, negotiate } from './transport.js'

/**
 * An error found before execution: the request as a whole is refused with
 * `statusCode` and `errors`, and no `data` (GraphQL over HTTP, "request
 * error"). Nothing has run.
 */
export class GraphQLRequestError extends Error {
  readonly statusCode: number
  readonly errors: readonly GraphQLError[]
  readonly headers: Readonly<Record<string, string>>
  /** The response's `extensions`, when the refusal has something to say beside its errors (the cost of an operation the budget refused). */
  readonly extensions: ResponseExtensions | undefined

  constructor (statusCode: number, errors: readonly GraphQLError[], headers: Record<string, string> = {}, extensions?: ResponseExtensions) {
    super(errors[0]?.message ?? 'the request was refused')
    this.name = 'GraphQLRequestError'
    this.statusCode = statusCode
    this.errors = errors
    this.headers = headers
    this.extensions = extensions
  }
}

/** What an operation asked of the budget: its worst-case cost, and the requests counted for it. */
export interface CostReport { requested: number, charged: number }

/** A response's `extensions`. */
export interface ResponseExtensions { cost: CostReport }

export const requestError = (statusCode: number, message: string, code: string, headers: Record<string, string> = {}): GraphQLRequestError =>
  new GraphQLRequestError(statusCode, [new GraphQLError(message, { extensions: { code } })], headers)

export interface FormatOptions {
  production: boolean
  requestId: string
  log: FastifyBaseLogger
}

// graphql-js suggests field and type names in its messages; in production
// they would let a client map a schema whose introspection is switched off.
const SUGGESTION = / ?Did you mean .*\?$/

const hideSuggestions = (message: string, { production }: FormatOptions): string =>
  production ? message.replace(SUGGESTION, '') : message

const internal = (error: unknown, { requestId, log }: FormatOptions): GraphQLFormattedError => {
  log.error({ err: error }, 'unexpected error in a GraphQL operation')
  return {
    message: `something went wrong on our side; quote request id ${requestId} when reporting it`,
    extensions: { code: 'INTERNAL', requestId }
  }
}

const codeOfRequestError = (error: GraphQLError): string => {
  if (typeof error.extensions.code === 'string') return error.extensions.code
  return error.message.startsWith('Syntax Error') ? 'GRAPHQL_PARSE_FAILED' : 'GRAPHQL_VALIDATION_FAILED'
}

/** An error that stopped the request before execution: its message is for the client. */
const formatRequestError = (error: unknown, options: FormatOptions): GraphQLFormattedError => {
  if (error instanceof GraphQLError) {
    if (error.originalError !== undefined && !(error.originalError instanceof GraphQLError) && !isDomainError(error.originalError)) {
      return internal(error.originalError, options)
    }
    const { message, locations, extensions } = error.toJSON()
    return {
      message: hideSuggestions(message, options),
      ...(locations ? { locations } : {}),
      extensions: { ...extensions, code: codeOfRequestError(error) }
    }
  }
  return internal(error, options)
}

/** An error that refused a subscription over WebSocket, shaped as the same refusal over HTTP. */
export const formatSocketError = (production: boolean) =>
  (error: unknown, requestId: string, log: FastifyBaseLogger): GraphQLFormattedError => formatRequestError(error, { production, requestId, log })

/**
 * An error raised while a field resolved. Domain errors keep their message
 * and show their code, as REST does; graphql-js' own errors (a field that
 * could not be completed) keep theirs; anything else is hidden behind the
 * request id.
 */
const formatFieldError = (error: GraphQLError, options: FormatOptions): GraphQLFormattedError => {
  const original = error.originalError
  const { message, locations, path } = error.toJSON()
  const where = { ...(locations ? { locations } : {}), ...(path ? { path } : {}) }
  if (isDomainError(original)) {
    if (STATUS_OF[original.code] >= 500) options.log.warn({ code: original.code }, original.message)
    return { message: original.message, ...where, extensions: { code: original.code, ...(original.field ? { field: original.field } : {}) } }
  }
  if (original instanceof GraphQLError) {
    return { ...formatRequestError(original, options), ...where }
  }
  if (original === undefined) return { message, ...where, extensions: { code: 'INTERNAL' } }
  return { ...internal(original, options), ...where }
}

/**
 * A result's status and body: 400 without `data` when execution never
 * started, else 200 with `data` and any field errors beside it. The body is
 * JSON text already when the database wrote its `data` (sql-plan.ts).
 */
export interface FormattedResult {
  status: number
  body: ResultBody | string
}

interface ResultBody { data?: ExecutionResult['data'], errors?: GraphQLFormattedError[], extensions?: ResponseExtensions }

/**
 * The body of a result whose `data` the database wrote as JSON text: the
 * bytes JSON.stringify gives for `{ data, extensions }`, without parsing the
 * data to write it again.
 */
export const formatJsonData = ({ text }: { text: string }, extensions: ResponseExtensions): FormattedResult =>
  ({ status: 200, body: `{"data":${text},"extensions":${JSON.stringify(extensions)}}` })

/**
 * Shapes an execution result. A result without `data` never started
 * executing: that is a request error, 400 without `data`. Otherwise 200
 * with `data`, null where a field failed, and `errors` beside it.
 * `extensions` go last, as GraphQL's response format has them.
 */
export const formatResult = (execution: ExecutionResult, options: FormatOptions, extensions?: ResponseExtensions): FormattedResult => {
  const { status, body } = shaped(execution, options)
  return { status, body: extensions === undefined ? body : { ...body, extensions } }
}

const shaped = (execution: ExecutionResult, options: FormatOptions): { status: number, body: ResultBody } => {
  if (execution.errors === undefined || execution.errors.length === 0) return { status: 200, body: { data: execution.data } }
  if (execution.data === undefined) {
    return { status: 400, body: { errors: execution.errors.map((e) => formatRequestError(e, options)) } }
  }
  return { status: 200, body: { data: execution.data, errors: execution.errors.map((e) => formatFieldError(e, options)) } }
}

/** What Mercurius hands the errorFormatter of a subscription: its connection's context. */
interface SubscriptionErrorContext { requestId: string, request: FastifyRequest }

/**
 * Mercurius' errorFormatter, for the events of a subscription whose
 * selection failed: shaped as over HTTP.
 */
export const errorFormatter = (production: boolean) =>
  (execution: ExecutionResult, { requestId, request }: SubscriptionErrorContext) => {
    const { status, body } = formatResult(execution, { production, requestId, log: request.log })
    return { statusCode: status, response: body }
  }

interface Refusal { status: number, errors: unknown[], headers: Readonly<Record<string, string>>, extensions?: ResponseExtensions | undefined }

const refusal = (error: FastifyError | GraphQLRequestError): Refusal => {
  if (error instanceof GraphQLRequestError) return { status: error.statusCode, errors: [...error.errors], headers: error.headers, extensions: error.extensions }
  // The access hook's refusals (no or bad credentials; the credential store
  // away): the status REST gives them, the code as REST shows it.
  if (isDomainError(error)) {
    const status = STATUS_OF[error.code]
    return {
      status,
      errors: [new GraphQLError(error.message, { extensions: { code: error.code } })],
      headers: status === 401 ? { 'www-authenticate': WWW_AUTHENTICATE } : {}
    }
  }
  const client = clientErrorOf(error)
  if (client) return { status: client.status, errors: [new GraphQLError(client.message, { extensions: { code: client.code } })], headers: {} }
  return { status: 500, errors: [error], headers: {} }
}

/**
 * The error handler of the /graphql routes: every refusal answers in GraphQL
 * shape (`errors`, no `data`), in the negotiated media type, the access
 * hook's 401 and 429 included.
 */
export const errorHandler = (production: boolean) =>
  async (error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const { status, errors, headers, extensions } = refusal(error)
    const options: FormatOptions = { production, requestId: request.id, log: request.log }
    const formatted = status >= 500 && !isDomainError(error) ? [internal(error, options)] : errors.map((e) => formatRequestError(e, options))
    await reply.code(status)
      .headers(headers)
      .header('content-type', contentTypeOf(negotiate(request.headers.accept) ?? MEDIA_TYPES.json))
      .send(extensions === undefined ? { errors: formatted } : { errors: formatted, extensions })
  }
