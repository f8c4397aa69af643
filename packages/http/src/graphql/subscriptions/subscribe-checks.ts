import type { Caller } from '@people-service/domain'
import { GraphQLError } from 'graphql'
import { GraphQLRequestError } from '../error-format.js'
import type { CheckedOperation, OperationRequest } from '../pipeline.js'

/*
 * A `subscribe` message is read here, then checked by the pipeline's
 * stages, as a GraphQL request over HTTP is (pipeline.ts), before Mercurius
 * sees it: size, tokens and JSON before parsing, validation (depth,
 * aliases, directives), an operation that exists and is a subscription,
 * variables, argument limits, worst-case cost, the policy table; its cost
 * is then charged (socket-session.ts).
 */

/** What a subscribe message asks to run, once its shape is checked. */
export interface SubscribeRequest {
  query: string
  variables: Record<string, unknown> | undefined
  operationName: string | undefined
}

const refused = (message: string, code: string): GraphQLError => new GraphQLError(message, { extensions: { code } })

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The payload of a subscribe message, or why it cannot be one. */
export const readSubscribePayload = (payload: unknown): SubscribeRequest | GraphQLError => {
  if (!isPlainObject(payload)) return refused('the payload must be an object: { query, variables, operationName }', 'BAD_REQUEST')
  const { query, variables, operationName } = payload
  if (typeof query !== 'string' || query.trim() === '') return refused('query is required: the GraphQL document, as a string', 'BAD_REQUEST')
  if (variables !== undefined && variables !== null && !isPlainObject(variables)) return refused('variables must be a JSON object', 'BAD_REQUEST')
  if (operationName !== undefined && operationName !== null && typeof operationName !== 'string') return refused('operationName must be a string', 'BAD_REQUEST')
  return {
    query,
    variables: isPlainObject(variables) ? variables : undefined,
    operationName: typeof operationName === 'string' && operationName !== '' ? operationName : undefined
  }
}

/** The pipeline's checks (pipeline.ts): parse → limits → authorize. */
export type Check = (request: OperationRequest) => CheckedOperation

/**
 * The checks of every door, on the subscription door: the checked
 * operation, or why the subscription must not start, as GraphQL errors for
 * the client.
 */
export const checkSubscription = (request: SubscribeRequest, caller: Caller, check: Check): CheckedOperation | readonly GraphQLError[] => {
  try {
    return check({ source: request.query, operationName: request.operationName, variables: request.variables, door: 'socket', caller })
  } catch (error) {
    if (error instanceof GraphQLRequestError) return error.errors
    throw error
  }
}
