import type { Caller } from '@people-service/domain'
import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql'
import { coercedVariables, deniedFields, fragmentsOf, rootTypesOf, selectedFields } from '../authorization.js'
import { costOf, costTooHighError } from '../cost.js'
import { checkArguments } from '../argument-limits.js'
import { checkDocumentSource, GRAPHQL_LIMITS } from '../limits.js'

/*
 * The checks a `subscribe` message passes before Mercurius sees it, the
 * same as a GraphQL request over HTTP gets (plugin.ts: checkRequest,
 * checkSource, the validation rules, checkBeforeExecution), with the same
 * functions: size, JSON and tokens before parsing, an operation that exists,
 * validation (depth, aliases, directives), variables, the policy table,
 * argument limits,
 * worst-case cost.
 */

/**
 * Mercurius does not validate a subscription it runs over WebSocket: the
 * standard rules and ours (limits.ts), the first error thrown.
 */
const validateSubscription = (schema: GraphQLSchema, document: DocumentNode, rules: readonly ValidationRule[]): void => {
  const [first] = validate(schema, document, [...specifiedRules, ...rules])
  if (first !== undefined) throw first
}

/** What a subscribe message asks to run, once its shape is checked. */
export interface SubscribeRequest {
  query: string
  variables: Record<string, unknown> | undefined
  operationName: string | undefined
}

export interface DocumentRules {
  schema: GraphQLSchema
  validationRules: readonly ValidationRule[]
  maxCost: number
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

const parsed = (query: string): DocumentNode | GraphQLError => {
  try {
    checkDocumentSource(query)
  } catch (error) {
    if (error instanceof GraphQLError) return error
    throw error
  }
  try {
    return parse(query, { maxTokens: GRAPHQL_LIMITS.maxTokens })
  } catch (error) {
    if (error instanceof GraphQLError) return new GraphQLError(error.message, { extensions: { code: 'GRAPHQL_PARSE_FAILED' } })
    throw error
  }
}

/**
 * Why the subscription must not start, as GraphQL errors for the client
 * (empty: it may). Stops at the first check that fails, cheapest first.
 */
export const refusalOf = (request: SubscribeRequest, caller: Caller, { schema, validationRules, maxCost }: DocumentRules): GraphQLError[] => {
  const document = parsed(request.query)
  if (document instanceof GraphQLError) return [document]
  const operation = getOperationAST(document, request.operationName)
  if (!operation) {
    return [refused(request.operationName === undefined
      ? 'the document has several operations, or none: say which to run with operationName'
      : `the document has no operation named ${JSON.stringify(request.operationName)}`, 'GRAPHQL_VALIDATION_FAILED')]
  }
  if (operation.operation !== 'subscription') {
    return [refused(`a ${operation.operation} is served over HTTP at /graphql; this socket serves subscriptions`, 'BAD_REQUEST')]
  }
  try {
    validateSubscription(schema, document, validationRules)
    const variables = coercedVariables(schema, operation, request.variables)
    const denied = deniedFields(caller, selectedFields(schema, operation, fragmentsOf(document.definitions), variables), rootTypesOf(schema))
    if (denied.length > 0) return denied
    checkArguments(schema, document, request.operationName, variables)
    const cost = costOf({ schema, document, variables: request.variables, operationName: request.operationName })
    if (cost > maxCost) return [costTooHighError(cost, maxCost)]
  } catch (error) {
    if (error instanceof GraphQLError) return [error]
    throw error
  }
  return []
}
