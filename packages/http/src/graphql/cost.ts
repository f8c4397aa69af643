import { GraphQLError, getNullableType, isListType, Kind, visit, type DocumentNode, type GraphQLSchema } from 'graphql'
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity'
import { LIST_ARGUMENTS } from './limits.js'
import type { LimitedListField } from './schema.js'

/**
 * The worst-case cost of a query: for every list field, the product of the
 * list limits along its path (its own included), summed over the document.
 * `{ people(limit: 100) { friends(limit: 10) { messages(limit: 5) { text } } } }`
 * costs 100 + 100·10 + 100·10·5 = 6,100. Computed bottom-up as
 * cost(list) = limit · (1 + cost of its selections), and for any other field
 * the cost of its selections.
 *
 * The same walk checks each list's `limit` against its range, literal or from
 * variables, so an out-of-range limit is refused before any resolver runs.
 */
export class LimitArgumentError extends GraphQLError {
  constructor (field: LimitedListField, limit: number, range: { min: number, max: number }) {
    const [, name] = field.split('.')
    super(`${name}(limit:) must be an integer from ${range.min} to ${range.max}, not ${limit}`, {
      extensions: { code: 'VALIDATION_FAILED', field: `${name}.limit` }
    })
  }
}

const isLimitedListField = (key: string): key is LimitedListField => key in LIST_ARGUMENTS

const estimator: ComplexityEstimator = ({ type, field, args, childComplexity }) => {
  const key = `${type.name}.${field.name}`
  if (isLimitedListField(key)) {
    const range = LIST_ARGUMENTS[key]
    const given: unknown = args.limit
    // An explicit null means "no preference": the default applies, as when absent.
    const limit = given === null || given === undefined ? range.default : Number(given)
    if (!Number.isInteger(limit) || limit < range.min || limit > range.max) throw new LimitArgumentError(key, limit, range)
    return limit * (1 + childComplexity)
  }
  // Every list of the schema is limited; only introspection's lists are not,
  // and those are as long as the schema is small.
  if (isListType(getNullableType(field.type)) && !field.name.startsWith('__') && !type.name.startsWith('__')) {
    throw new Error(`list field ${key} has no limit argument: give it one in LIST_ARGUMENTS`)
  }
  return childComplexity
}

export interface CostInput {
  schema: GraphQLSchema
  document: DocumentNode
  variables?: Record<string, unknown> | undefined
  operationName?: string | undefined
}

const computeCost = ({ schema, document, variables, operationName }: CostInput): number =>
  getComplexity({
    schema,
    query: document,
    estimators: [estimator],
    ...(variables ? { variables } : {}),
    ...(operationName ? { operationName } : {})
  })

/**
 * The variables a document's cost can depend on: those given to a `limit:`
 * argument or to a directive (`@include(if: $x)` prunes a subtree). An `id`
 * variable changes on every request and never changes the cost.
 */
const costVariablesOf = (document: DocumentNode): string[] => {
  const names = new Set<string>()
  let inDirective = 0
  visit(document, {
    Directive: { enter: () => { inDirective++ }, leave: () => { inDirective-- } },
    Argument (node) {
      if (node.value.kind === Kind.VARIABLE && (inDirective > 0 || node.name.value === 'limit')) names.add(node.value.name.value)
    }
  })
  return [...names]
}

interface DocumentCosts { variables: string[], costs: Map<string, number> }

const COSTS_PER_DOCUMENT = 64
const documentCosts = new WeakMap<DocumentNode, DocumentCosts>()

/**
 * The worst-case cost of the operation to run; throws LimitArgumentError or
 * a variable error. Mercurius hands over the same document object for the
 * same query text (its parse cache), so a cost is computed once per document,
 * operation and values of the variables it depends on; failures are never
 * remembered.
 */
export const costOf = (input: CostInput): number => {
  let known = documentCosts.get(input.document)
  if (known === undefined) {
    known = { variables: costVariablesOf(input.document), costs: new Map() }
    documentCosts.set(input.document, known)
  }
  const given = input.variables ?? {}
  // Absent and null differ for a variable with a default: each gets its own entry.
  const key = JSON.stringify([input.operationName ?? null, ...known.variables.map((name) => (name in given ? [given[name]] : []))])
  let cost = known.costs.get(key)
  if (cost === undefined) {
    cost = computeCost(input)
    if (known.costs.size >= COSTS_PER_DOCUMENT) known.costs.clear()
    known.costs.set(key, cost)
  }
  return cost
}

export const costTooHighError = (cost: number, max: number): GraphQLError =>
  new GraphQLError(`the query's worst-case cost is ${cost}, over the budget of ${max}; ask for smaller limits or fewer nested lists`, {
    extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: max }
  })
