import { Kind, specifiedRules, validate, type DocumentNode, type GraphQLResolveInfo, type GraphQLSchema, type ValidationRule } from 'graphql'
import { checkArguments } from './argument-limits.js'
import { costOf, costTooHighError } from './cost.js'

/*
 * Mercurius runs subscriptions over WebSocket without validating them and
 * without the preExecution hook, so the HTTP path's checks are repeated here.
 */

/** Validates a subscription document with the standard rules and ours (limits.ts); throws the first error. */
export const validateSubscription = (schema: GraphQLSchema, document: DocumentNode, rules: readonly ValidationRule[]): void => {
  const [first] = validate(schema, document, [...specifiedRules, ...rules])
  if (first !== undefined) throw first
}

/**
 * Checks arguments and cost once the variables are known: in the subscribe
 * resolver, whose `info` holds the operation, its fragments and the coerced
 * variables.
 */
export const checkSubscriptionLimits = (info: GraphQLResolveInfo, maxCost: number): void => {
  const document: DocumentNode = { kind: Kind.DOCUMENT, definitions: [info.operation, ...Object.values(info.fragments)] }
  checkArguments(info.schema, document, undefined, info.variableValues)
  const cost = costOf({ schema: info.schema, document, variables: info.variableValues })
  if (cost > maxCost) throw costTooHighError(cost, maxCost)
}
