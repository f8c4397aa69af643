import { MESSAGE_LIMITS } from '@people-service/domain'
import {
  GraphQLError, GraphQLIncludeDirective, GraphQLSkipDirective, getDirectiveValues, getNamedType, getNullableType, introspectionFromSchema,
  isLeafType, isListType, isObjectType, Kind, visit, type ArgumentNode, type DocumentNode, type FieldNode, type FragmentDefinitionNode,
  type GraphQLField, type GraphQLSchema, type OperationDefinitionNode, type SelectionNode, type SelectionSetNode
} from 'graphql'
import { getComplexity, type ComplexityEstimator } from 'graphql-query-complexity'
import { LIST_ARGUMENTS, listLimit, type ListField } from './argument-limits.js'
import { GRAPHQL_LIMITS } from './limits.js'
import { arrayBytes, VALUE_BYTES } from '../response-size.js'

/** Cost units one request of the budget pays for (docs/API.md, "Query endpoint"). */
export const COST_PER_REQUEST = 100

/** Characters of a large value that cost one unit: a message's text of 10,000 characters costs 100. */
export const CHARACTERS_PER_UNIT = 100

/**
 * The worst-case cost of a query, in units of about one row read and
 * answered (bench/cost.ts measures what a unit takes). Every list item costs
 * 1, times the list limits along its path: cost(list) = limit · (1 + cost of
 * its selections), so
 * `{ people(limit: 100) { friends(limit: 10) { messages(limit: 5) { id } } } }`
 * costs 100 + 100·10 + 100·10·5 = 6,100. On top of that, what a list item
 * does not carry: `age`, `email` and `address` of a list entry load the whole
 * person (1 each, per entry), as `Message.person` does (1); a person that is
 * not a list entry (`person(id:)`, a mutation's result, a message's person)
 * is read whole anyway, so its fields cost nothing more. A large value costs
 * its worst-case size, 1 per CHARACTERS_PER_UNIT characters, in every entry
 * that carries it: a message's `text` 100. A `name` filter reads the name
 * index or, under three characters, scans every name. Introspection's lists
 * cost `introspectionEntry` an entry, as long as the schema's longest of each
 * (introspectionSizes), so what it answers is priced as data is.
 * A mutation field does what one REST write does and costs what one request
 * pays for (COST_PER_REQUEST).
 * Arguments are in range by now (argument-limits.ts checks them first).
 */
export const COST_WEIGHTS = {
  /** `people(name:)` / `peopleConnection(name:)`: a scan of all names costs about as much as answering this many rows. */
  nameSearch: 2_000,
  /** A field only the whole person has, per entry of a list of people. */
  wholePersonField: 1,
  /** `Message.person`: one person looked up by id. */
  messagePerson: 1,
  /** `Message.text`: up to 10,000 characters, written and read as 100 rows would be. */
  messageText: Math.ceil(MESSAGE_LIMITS.textLength / CHARACTERS_PER_UNIT),
  /**
   * An entry of one of introspection's lists: its fields each run a
   * resolver of their own, and its types nest objects (`ofType`) the entry
   * does not count; measured at about twice a row's time.
   */
  introspectionEntry: 2,
  /** A field of the Mutation type: one write, as one REST request is. */
  mutation: COST_PER_REQUEST
} as const

/** Units a field costs beyond its entry and its list, by coordinate. */
const FIELD_UNITS: Readonly<Record<string, number>> = {
  'Message.text': COST_WEIGHTS.messageText,
  'Message.person': COST_WEIGHTS.messagePerson
}

const WHOLE_PERSON_FIELDS = new Set(['age', 'email', 'address'])

/**
 * The worst-case JSON size of each leaf field of the schema's own types, by
 * coordinate (response-size.ts has the figures). Fields named `cursor` or
 * `endCursor`, and Boolean, Int and ID fields, go by their name or type; a
 * String field in none of these fails the start (assertEveryFieldPriced).
 */
export const FIELD_BYTES: Readonly<Record<string, number>> = {
  'Person.name': VALUE_BYTES.name,
  'Person.email': VALUE_BYTES.email,
  'Address.street': VALUE_BYTES.addressField,
  'Address.city': VALUE_BYTES.addressField,
  'Address.country': VALUE_BYTES.addressField,
  'Message.text': VALUE_BYTES.text,
  'Message.senderId': VALUE_BYTES.id,
  'Message.sentAt': VALUE_BYTES.instant
}

const BYTES_BY_NAME: Readonly<Record<string, number>> = { cursor: VALUE_BYTES.cursor, endCursor: VALUE_BYTES.cursor }
const BYTES_BY_TYPE: Readonly<Record<string, number>> = { Boolean: VALUE_BYTES.boolean, Int: VALUE_BYTES.int, ID: VALUE_BYTES.id }

const isIntrospection = (type: string, field: string): boolean => type.startsWith('__') || field.startsWith('__')

/**
 * What introspection answers at most, from the schema itself: the longest
 * list of each list field (`types`, `fields`, `args`, …) and the longest
 * value of each string field (`name`, `description`, …), as JSON.
 */
interface IntrospectionSizes { lists: ReadonlyMap<string, number>, strings: ReadonlyMap<string, number>, longest: number }

const introspectionSizeCache = new WeakMap<GraphQLSchema, IntrospectionSizes>()

export const introspectionSizes = (schema: GraphQLSchema): IntrospectionSizes => {
  const known = introspectionSizeCache.get(schema)
  if (known !== undefined) return known
  const lists = new Map<string, number>()
  const strings = new Map<string, number>()
  const most = (map: Map<string, number>, key: string, value: number): void => { map.set(key, Math.max(map.get(key) ?? 0, value)) }
  const walk = (value: unknown, key: string): void => {
    if (Array.isArray(value)) {
      most(lists, key, value.length)
      for (const item of value) walk(item, key)
    } else if (typeof value === 'string') {
      most(strings, key, Buffer.byteLength(JSON.stringify(value)))
    } else if (typeof value === 'object' && value !== null) {
      for (const [name, inner] of Object.entries(value)) walk(inner, name)
    }
  }
  walk(introspectionFromSchema(schema, { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }), '')
  const sizes = { lists, strings, longest: Math.max(0, ...strings.values()) }
  introspectionSizeCache.set(schema, sizes)
  return sizes
}

/** The worst-case JSON size of a leaf field's value; undefined when the tables do not say. */
const leafBytes = (schema: GraphQLSchema, type: string, field: GraphQLField<unknown, unknown>): number | undefined => {
  const named = getNamedType(field.type).name
  if (isIntrospection(type, field.name)) {
    if (field.name === '__typename') return introspectionSizes(schema).strings.get('name')
    return BYTES_BY_TYPE[named] ?? introspectionSizes(schema).strings.get(field.name) ?? introspectionSizes(schema).longest
  }
  return FIELD_BYTES[`${type}.${field.name}`] ?? BYTES_BY_NAME[field.name] ?? BYTES_BY_TYPE[named]
}

/** A connection's `edges`: as many as its `first`, counted at the connection. */
const isConnectionEdges = (type: string, field: string): boolean => type.endsWith('Connection') && field === 'edges'

/** The path from a list field to its entries when they are people: none for a list of people, `edges.node` for a connection of people. */
const personEntriesOf = (field: GraphQLField<unknown, unknown>): readonly string[] | undefined => {
  const named = getNamedType(field.type)
  if (named.name === 'Person') return []
  if (!isObjectType(named)) return undefined
  const edges = named.getFields().edges
  const edge = edges === undefined ? undefined : getNamedType(edges.type)
  const node = edge !== undefined && isObjectType(edge) ? edge.getFields().node : undefined
  return node !== undefined && getNamedType(node.type).name === 'Person' ? ['edges', 'node'] : undefined
}

/**
 * Fails the start when a field of the schema could not be priced: a list
 * without a limit argument, or a leaf whose worst-case size no table gives.
 */
export const assertEveryFieldPriced = (schema: GraphQLSchema): void => {
  const missing: string[] = []
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue
    for (const field of Object.values(type.getFields())) {
      const key = `${type.name}.${field.name}`
      if (isListType(getNullableType(field.type)) && !isListField(key) && !isConnectionEdges(type.name, field.name)) missing.push(`${key} (a list without a limit: give it one in LIST_ARGUMENTS)`)
      if (isLeafType(getNamedType(field.type)) && leafBytes(schema, type.name, field as GraphQLField<unknown, unknown>) === undefined) missing.push(`${key} (no worst-case size: give it one in FIELD_BYTES)`)
    }
  }
  if (missing.length > 0) throw new Error(`GraphQL fields the cost model cannot price (graphql/cost.ts): ${missing.join(', ')}`)
}

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

/** How long a list field's list is at most: its limit, or for introspection the schema's longest. */
const listLength = (schema: GraphQLSchema, key: string, field: GraphQLField<unknown, unknown>, args: Record<string, unknown>, type: string): number | undefined => {
  if (isListField(key)) return listLimit(key, args[LIST_ARGUMENTS[key].argument])
  if (isIntrospection(type, field.name) && isListType(getNullableType(field.type))) return introspectionSizes(schema).lists.get(field.name) ?? 0
  return undefined
}

const costEstimator = (schema: GraphQLSchema, fragments: Fragments, variables: Record<string, unknown>): ComplexityEstimator => ({ type, field, node, args, childComplexity }) => {
  const key = `${type.name}.${field.name}`
  const length = listLength(schema, key, field, args, type.name)
  if (length !== undefined) {
    const search = isListField(key) && typeof args.name === 'string' ? COST_WEIGHTS.nameSearch : 0
    const entries = personEntriesOf(field)
    const whole = entries === undefined ? 0 : COST_WEIGHTS.wholePersonField * wholePersonFieldsOf(node, entries, fragments, variables)
    const entry = isIntrospection(type.name, field.name) ? COST_WEIGHTS.introspectionEntry : 1
    return search + length * (entry + whole + childComplexity)
  }
  if (type.name === 'Mutation') return COST_WEIGHTS.mutation + childComplexity
  if (isConnectionEdges(type.name, field.name)) return childComplexity
  // Every other list of the schema is limited (assertEveryFieldPriced).
  if (isListType(getNullableType(field.type)) && !isIntrospection(type.name, field.name)) {
    throw new Error(`list field ${key} has no limit argument: give it one in LIST_ARGUMENTS`)
  }
  return (FIELD_UNITS[key] ?? 0) + childComplexity
}

/** JSON of a member: its key, quotes, colon and comma. */
const memberBytes = (node: FieldNode): number => (node.alias ?? node.name).value.length + 4

/**
 * The worst-case JSON size of a selection: each member's key and value, an
 * object's braces, a list's brackets and commas, times the list limits
 * along its path; a connection's page counted at the connection.
 */
const bytesEstimator = (schema: GraphQLSchema): ComplexityEstimator => ({ type, field, node, args, childComplexity }) => {
  const key = `${type.name}.${field.name}`
  const named = getNamedType(field.type)
  const value = isLeafType(named) ? leafBytes(schema, type.name, field) ?? introspectionSizes(schema).longest : 2 + childComplexity
  const length = listLength(schema, key, field, args, type.name)
  if (length !== undefined) return memberBytes(node) + arrayBytes(length, value)
  if (isConnectionEdges(type.name, field.name)) return memberBytes(node) + arrayBytes(1, value)
  return memberBytes(node) + Math.max(4, value)
}

/** The envelope around `data`: `{"data":…,"extensions":{"cost":{…}}}`. */
const ENVELOPE_BYTES = 128

/** An operation's worst case: its cost in units, and the size of its response in bytes. */
export interface OperationWeight { cost: number, bytes: number }

const computeWeight = (schema: GraphQLSchema, document: DocumentNode, fragments: Fragments, operationName: string | undefined, variables: Record<string, unknown>): OperationWeight => {
  const options = {
    schema,
    query: document,
    variables,
    // The document limits count the same nodes first, in one pass (limits.ts).
    maxQueryNodes: GRAPHQL_LIMITS.maxSelections + 1,
    ...(operationName ? { operationName } : {})
  }
  return {
    cost: getComplexity({ ...options, estimators: [costEstimator(schema, fragments, variables)] }),
    bytes: ENVELOPE_BYTES + getComplexity({ ...options, estimators: [bytesEstimator(schema)] })
  }
}

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
 * The worst-case cost and size of one operation of a document, as a function of the
 * request's coerced variables. Arguments are checked before
 * (argument-limits.ts). A cost is computed once per values of the variables
 * it depends on (once for good when it depends on none); failures are never
 * remembered.
 */
export const operationWeight = (schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): (variables: Record<string, unknown>) => OperationWeight => {
  const fragments = document.definitions.filter((d) => d.kind === Kind.FRAGMENT_DEFINITION)
  const byName: Fragments = new Map(fragments.map((fragment) => [fragment.name.value, fragment]))
  const operationName = operation.name?.value
  const { values, presence } = costVariablesOf(operation, fragments)
  if (values.length === 0 && presence.length === 0) {
    let fixed: OperationWeight | undefined
    return (variables) => (fixed ??= computeWeight(schema, document, byName, operationName, variables))
  }
  const costs = new Map<string, OperationWeight>()
  return (variables) => {
    // Absent and null differ for a variable with a default: each gets its own entry.
    const key = JSON.stringify([
      ...values.map((name) => (name in variables ? [variables[name]] : [])),
      ...presence.map((name) => variables[name] === undefined || variables[name] === null ? 0 : 1)
    ])
    let cost = costs.get(key)
    if (cost === undefined) {
      cost = computeWeight(schema, document, byName, operationName, variables)
      if (costs.size >= COSTS_PER_OPERATION) costs.clear()
      costs.set(key, cost)
    }
    return cost
  }
}

/** What an operation of this cost counts against the caller's budget, in requests: max(1, ceil(cost / 100)). */
export const requestsFor = (cost: number): number => Math.max(1, Math.ceil(cost / COST_PER_REQUEST))

export const responseTooLargeError = (bytes: number, max: number): GraphQLError =>
  new GraphQLError(`the query's worst-case response is ${bytes.toLocaleString('en')} bytes, over the ${max.toLocaleString('en')} a response may take (MAX_RESPONSE_BYTES); ask for smaller limits or fewer large fields (a message's text counts 10,000 characters at up to 6 bytes each)`, {
    extensions: { code: 'QUERY_TOO_COSTLY', bytes, maxBytes: max }
  })

export const costTooHighError = (cost: number, max: number): GraphQLError =>
  new GraphQLError(`the query's worst-case cost is ${cost}, over the budget of ${max}; ask for smaller limits or fewer nested lists`, {
    extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: max }
  })
