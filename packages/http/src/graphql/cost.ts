import {
  GraphQLError, GraphQLIncludeDirective, GraphQLSkipDirective, getDirectiveValues, getNullableType, isListType, Kind, visit, type ArgumentNode,
  type DocumentNode, type FieldNode, type FragmentDefinitionNode, type GraphQLSchema, type OperationDefinitionNode, type SelectionNode,
  type SelectionSetNode
} from 'graphql'
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity'
import { LIST_ARGUMENTS, listLimit, type ListField } from './argument-limits.js'
import { GRAPHQL_LIMITS } from './limits.js'

/** Cost units one request of the budget pays for (docs/API.md, "Query endpoint"). */
export const COST_PER_REQUEST = 100

/**
 * The worst-case cost of a query, in units of about one row read and
 * answered (bench/cost.ts measures what a unit takes). Every list item costs
 * 1, times the list limits along its path: cost(list) = limit · (1 + cost of
 * its selections), so
 * `{ people(limit: 100) { friends(limit: 10) { messages(limit: 5) { text } } } }`
 * costs 100 + 100·10 + 100·10·5 = 6,100. On top of that, what a list item
 * does not carry: `age`, `email` and `address` of a list entry load the whole
 * person (1 each, per entry), as `Message.person` does (1); a person that is
 * not a list entry (`person(id:)`, a mutation's result, a message's person)
 * is read whole anyway, so its fields cost nothing more. A `name` filter
 * reads the name index or, under three characters, scans every name.
 * A mutation field does what one REST write does and costs what one request
 * pays for (COST_PER_REQUEST): thirty aliased `sendMessage` in one document
 * had been charged one request for thirty writes.
 * Arguments are in range by now (argument-limits.ts checks them first).
 */
export const COST_WEIGHTS = {
  /** `people(name:)` / `peopleConnection(name:)`: a scan of all names costs about as much as answering this many rows. */
  nameSearch: 2_000,
  /** A field only the whole person has, per entry of a list of people. */
  wholePersonField: 1,
  /** `Message.person`: one person looked up by id. */
  messagePerson: 1,
  /** A field of the Mutation type: one write, as one REST request is. */
  mutation: COST_PER_REQUEST
} as const

const WHOLE_PERSON_FIELDS = new Set(['age', 'email', 'address'])

/** The lists of people, and the path from the list's field to its entries (a connection's are its edges' nodes). */
const PERSON_ENTRIES: Partial<Record<ListField, readonly string[]>> = {
  'Query.people': [],
  'Query.peopleConnection': ['edges', 'node'],
  'Person.friends': [],
  'Person.friendsConnection': ['edges', 'node']
}

/** A connection's edges: as many as its `first`, counted at the connection as the list it pages. */
const CONNECTION_EDGES: ReadonlySet<string> = new Set(['PersonConnection.edges', 'MessageConnection.edges'])

const isListField = (key: string): key is ListField => key in LIST_ARGUMENTS

type Fragments = ReadonlyMap<string, FragmentDefinitionNode>

/** Kept by `@skip` / `@include` under these variables, as the cost library and execution decide. */
const isIncluded = (node: SelectionNode, variables: Record<string, unknown>): boolean =>
  getDirectiveValues(GraphQLSkipDirective, node, variables)?.if !== true &&
  getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false

/** The fields a selection set asks for, through its inline fragments and fragment spreads. */
const fieldsOf = (set: SelectionSetNode | undefined, fragments: Fragments, variables: Record<string, unknown>): FieldNode[] =>
  (set?.selections ?? []).filter((selection) => isIncluded(selection, variables)).flatMap((selection) =>
    selection.kind === Kind.FIELD
      ? [selection]
      : fieldsOf(selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : fragments.get(selection.name.value)?.selectionSet, fragments, variables))

/** How many of `age`, `email` and `address` (aliases counted) each entry of a list of people asks for. */
const wholePersonFieldsOf = (list: FieldNode, path: readonly string[], fragments: Fragments, variables: Record<string, unknown>): number => {
  let entries: FieldNode[] = [list]
  for (const name of path) entries = entries.flatMap((field) => fieldsOf(field.selectionSet, fragments, variables).filter((f) => f.name.value === name))
  return entries.reduce((sum, entry) => sum + fieldsOf(entry.selectionSet, fragments, variables).filter((f) => WHOLE_PERSON_FIELDS.has(f.name.value)).length, 0)
}

const estimatorFor = (fragments: Fragments, variables: Record<string, unknown>): ComplexityEstimator => ({ type, field, node, args, childComplexity }) => {
  const key = `${type.name}.${field.name}`
  if (isListField(key)) {
    const limit = listLimit(key, args[LIST_ARGUMENTS[key].argument])
    const search = typeof args.name === 'string' ? COST_WEIGHTS.nameSearch : 0
    const entries = PERSON_ENTRIES[key]
    const whole = entries === undefined ? 0 : COST_WEIGHTS.wholePersonField * wholePersonFieldsOf(node, entries, fragments, variables)
    return search + limit * (1 + whole + childComplexity)
  }
  if (key === 'Message.person') return COST_WEIGHTS.messagePerson + childComplexity
  if (type.name === 'Mutation') return COST_WEIGHTS.mutation + childComplexity
  if (CONNECTION_EDGES.has(key)) return childComplexity
  // Every other list of the schema is limited; only introspection's lists are
  // not, and those are as long as the schema is small.
  if (isListType(getNullableType(field.type)) && !field.name.startsWith('__') && !type.name.startsWith('__')) {
    throw new Error(`list field ${key} has no limit argument: give it one in LIST_ARGUMENTS`)
  }
  return childComplexity
}

const computeCost = (schema: GraphQLSchema, document: DocumentNode, fragments: Fragments, operationName: string | undefined, variables: Record<string, unknown>): number =>
  getComplexity({
    schema,
    query: document,
    estimators: [estimatorFor(fragments, variables)],
    variables,
    // The document limits count the same nodes first, in one pass (limits.ts).
    maxQueryNodes: GRAPHQL_LIMITS.maxSelections + 1,
    ...(operationName ? { operationName } : {})
  })

/**
 * The variables an operation's cost can depend on: the values given to a
 * list's bound (`limit:`, `first:`) or to a directive (`@include(if: $x)`
 * prunes a subtree), and whether a `name:` filter is given at all. An `id`
 * variable changes on every request and never changes the cost.
 */
interface CostVariables { values: string[], presence: string[] }

const costVariablesOf = (operation: OperationDefinitionNode, fragments: readonly FragmentDefinitionNode[]): CostVariables => {
  const values = new Set<string>()
  const presence = new Set<string>()
  let inDirective = 0
  const visitor = {
    Directive: { enter: () => { inDirective++ }, leave: () => { inDirective-- } },
    Argument (node: ArgumentNode) {
      if (node.value.kind !== Kind.VARIABLE) return
      const argument = node.name.value
      if (inDirective > 0 || argument === 'limit' || argument === 'first') values.add(node.value.name.value)
      else if (argument === 'name') presence.add(node.value.name.value)
    }
  }
  for (const node of [operation, ...fragments]) visit(node, visitor)
  return { values: [...values], presence: [...presence].filter((name) => !values.has(name)) }
}

const COSTS_PER_OPERATION = 64

/**
 * The worst-case cost of one operation of a document, as a function of the
 * request's coerced variables. Arguments are checked before
 * (argument-limits.ts). A cost is computed once per values of the variables
 * it depends on (once for good when it depends on none); failures are never
 * remembered.
 */
export const operationCost = (schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): (variables: Record<string, unknown>) => number => {
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)
  const byName: Fragments = new Map(fragments.map((fragment) => [fragment.name.value, fragment]))
  const operationName = operation.name?.value
  const { values, presence } = costVariablesOf(operation, fragments)
  if (values.length === 0 && presence.length === 0) {
    let fixed: number | undefined
    return (variables) => (fixed ??= computeCost(schema, document, byName, operationName, variables))
  }
  const costs = new Map<string, number>()
  return (variables) => {
    // Absent and null differ for a variable with a default: each gets its own entry.
    const key = JSON.stringify([
      ...values.map((name) => (name in variables ? [variables[name]] : [])),
      ...presence.map((name) => variables[name] === undefined || variables[name] === null ? 0 : 1)
    ])
    let cost = costs.get(key)
    if (cost === undefined) {
      cost = computeCost(schema, document, byName, operationName, variables)
      if (costs.size >= COSTS_PER_OPERATION) costs.clear()
      costs.set(key, cost)
    }
    return cost
  }
}

/** What an operation of this cost counts against the caller's budget, in requests: max(1, ceil(cost / 100)). */
export const requestsFor = (cost: number): number => Math.max(1, Math.ceil(cost / COST_PER_REQUEST))

export const costTooHighError = (cost: number, max: number): GraphQLError =>
  new GraphQLError(`the query's worst-case cost is ${cost}, over the budget of ${max}; ask for smaller limits or fewer nested lists`, {
    extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: max }
  })
