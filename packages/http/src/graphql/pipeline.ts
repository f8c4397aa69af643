import type { Caller } from '@people-service/domain'
import type { FastifyBaseLogger } from 'fastify'
import { GraphQLError, type OperationTypeNode } from 'graphql'
import { RateLimitedError } from '../auth/rate-limits.js'
import type { GraphQLContext } from './context.js'
import { requestsFor } from './cost.js'
import { DocumentCache, type DocumentSettings } from './documents.js'
import { formatJsonData, formatResult, GraphQLRequestError, requestError, type CostReport, type FormattedResult } from './error-format.js'
import { planOf } from './plan.js'
import type { PreparedOperation } from './prepared-operation.js'
import { JsonData } from './sql-plan.js'
import type { RecordingSpan, Tracing } from '../tracing.js'

/*
 * One GraphQL operation, from its text to its answer, in stages:
 *
 *   parse      the text, parsed and validated once per text (documents.ts)
 *   limits     the operation named, its door, its variables coerced once,
 *              its arguments' limits and worst-case cost (prepared-operation.ts)
 *   authorize  every field it runs against the policy table, for the caller
 *   charge     its cost against the caller's budget, in requests
 *   plan       how it will run (plan.ts)
 *   execute    the plan, in the request's context
 *   format     status and body, the cost in `extensions` (error-format.ts)
 *
 * What depends on the document alone is worked out once per document and
 * operation name, and what depends on the caller once per set of scopes; a
 * request pays for its variables. The first four stages are every door's:
 * HTTP runs the whole pipeline (http-route.ts), a WebSocket subscribe goes
 * through them before Mercurius runs it (subscriptions/socket-session.ts).
 */

/**
 * Where an operation came in: GET (HEAD too) runs queries only, POST
 * queries and mutations, a WebSocket subscribe subscriptions only.
 */
export type Door = 'GET' | 'POST' | 'socket'

/** What one request asks, once its door has read it. */
export interface OperationRequest {
  source: string
  operationName: string | undefined
  /** As sent: coerced by the limits stage. */
  variables: Record<string, unknown> | undefined
  door: Door
  caller: Caller
}

/** An operation that passed every check, with its coerced variables and worst-case cost. */
export interface CheckedOperation {
  operation: PreparedOperation
  variables: Record<string, unknown>
  cost: number
}

const OVER_WEBSOCKET = 'served over WebSocket at /graphql (graphql-ws protocol), not over HTTP'

/** Each door takes its own kinds of operation; anything else is refused before its variables are read. */
const admit = (kind: OperationTypeNode, door: Door): void => {
  if (door === 'socket') {
    if (kind !== 'subscription') throw requestError(400, `a ${kind} is served over HTTP at /graphql; this socket serves subscriptions`, 'BAD_REQUEST')
    return
  }
  if (kind === 'subscription') {
    throw door === 'POST'
      ? requestError(400, `subscriptions are ${OVER_WEBSOCKET}`, 'SUBSCRIPTION_OVER_HTTP')
      : requestError(405, `subscriptions are ${OVER_WEBSOCKET}`, 'METHOD_NOT_ALLOWED', { allow: 'GET, HEAD, POST' })
  }
  if (kind === 'mutation' && door === 'GET') {
    throw requestError(405, 'a mutation changes data and is only accepted over POST', 'METHOD_NOT_ALLOWED', { allow: 'POST' })
  }
}

/**
 * Charges the caller's budget this many requests, all or nothing; throws
 * RateLimitedError (and charges nothing) when the budget cannot pay.
 */
export type Pay = (units: number) => void | Promise<void>

/**
 * The charge stage: an operation counts as max(1, ceil(cost / 100))
 * requests against the caller's budget. Its request paid one already, before
 * anything of it was read (the access hook, or the socket session for a
 * subscribe), so parsing is paid for whatever follows; the rest is charged
 * here, after the checks and before anything runs. Throws RateLimitedError
 * when the budget cannot pay: nothing has run, and only that one request
 * was counted.
 */
export const chargeCost = async ({ cost }: CheckedOperation, pay: Pay): Promise<CostReport> => {
  const charged = requestsFor(cost)
  if (charged > 1) await pay(charged - 1)
  return { requested: cost, charged }
}

/** What running an operation needs of its request. */
export interface Running {
  /** The resolvers' context. */
  context: GraphQLContext
  log: FastifyBaseLogger
  /** The caller's budget (the charge stage). */
  pay: Pay
}

export interface PipelineOptions extends DocumentSettings {
  /** Introspection off and "Did you mean" suggestions hidden (limits.ts, error-format.ts). */
  production: boolean
  /** A span per operation run (`run`), when tracing is on. */
  tracing?: Tracing
}

export interface Pipeline {
  /**
   * parse → limits → authorize: everything before anything runs. Throws the
   * refusal (GraphQLRequestError: its status, its errors); nothing has run.
   */
  check(request: OperationRequest): CheckedOperation
  /**
   * The whole pipeline: a refusal is thrown, as by `check`, the budget's as a
   * 429 with the cost in its `extensions`; a result is formatted, the cost
   * in its `extensions`.
   */
  run(request: OperationRequest, running: Running): Promise<FormattedResult>
}

export const createPipeline = ({ production, tracing, ...settings }: PipelineOptions): Pipeline => {
  const documents = new DocumentCache(settings)

  const check = (request: OperationRequest): CheckedOperation => {
    // parse
    const document = documents.parse(request.source)
    // limits
    const operation = document.operation(request.operationName)
    admit(operation.kind, request.door)
    const variables = operation.coerce(request.variables)
    const cost = operation.limits(variables)
    // authorize
    operation.authorize(request.caller, variables)
    return { operation, variables, cost }
  }

  const run = async (request: OperationRequest, { context, log, pay }: Running, span?: RecordingSpan): Promise<FormattedResult> => {
    const checked = check(request)
    // Named for the operation the document holds, with its kind and cost: never its text or variables.
    const { name, kind } = checked.operation
    span?.rename(name === undefined ? `graphql ${kind}` : `graphql ${name}`)
    span?.set({
      'graphql.operation.type': kind,
      'graphql.cost.requested': checked.cost,
      'graphql.cost.charged': requestsFor(checked.cost),
      ...(name === undefined ? {} : { 'graphql.operation.name': name })
    })
    let cost: CostReport
    try {
      cost = await chargeCost(checked, pay)
    } catch (error) {
      if (!(error instanceof RateLimitedError)) throw error
      throw new GraphQLRequestError(429, [new GraphQLError(error.message, { extensions: { code: error.code } })], {}, {
        cost: { requested: checked.cost, charged: 1 }
      })
    }
    const plan = planOf(checked.operation)
    const result = await plan.run(context, checked.variables, log)
    if (result instanceof JsonData) return formatJsonData(result, { cost })
    return formatResult(result, { production, requestId: context.requestId, log }, { cost })
  }

  return {
    check,
    run: tracing === undefined
      ? run
      : (request, running) => tracing.inSpan('graphql', {}, (span) => run(request, running, span))
  }
}
