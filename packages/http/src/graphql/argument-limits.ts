import {
  characterCount, checkMessageText, checkPersonFields, checkPersonPatch, isDomainError, isId, LIST_LIMITS, PERSON_LIMITS,
  type PersonInput, type PersonPatch
} from '@people-service/domain'
import {
  getArgumentValues, getNamedType, GraphQLError, isObjectType, Kind, visit, type FieldNode, type FragmentDefinitionNode,
  type GraphQLField, type GraphQLObjectType, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode
} from 'graphql'

/*
 * Every argument carries the limit of the same field in REST (API.md, "Query
 * endpoint"), checked before anything runs: a value outside it refuses the
 * request (400, VALIDATION_FAILED, `extensions.field` naming the argument),
 * so no statement is prepared for a 120 KB name and no mutation of a document
 * runs before a later one's bad input is found.
 */

/** The REST cursor's cap (list.schemas.ts): a cursor this service issued is far shorter. */
const CURSOR_LENGTH = 512

/** A list's `limit` (or a connection's `first`): its range and what it is when not given. */
export interface ListArgument { argument: string, min: number, max: number, default: number }

/** The list fields, by coordinate, and the argument that bounds each: the cost model multiplies by it. */
export const LIST_ARGUMENTS = {
  'Query.people': { argument: 'limit', min: 1, max: LIST_LIMITS.people.max, default: LIST_LIMITS.people.default },
  'Query.peopleConnection': { argument: 'first', min: 1, max: LIST_LIMITS.people.max, default: LIST_LIMITS.people.default },
  'Person.friends': { argument: 'limit', min: 0, max: LIST_LIMITS.friends.max, default: LIST_LIMITS.friends.default },
  'Person.friendsConnection': { argument: 'first', min: 1, max: LIST_LIMITS.friends.max, default: LIST_LIMITS.friends.default },
  'Person.messages': { argument: 'limit', min: 1, max: LIST_LIMITS.inbox.max, default: LIST_LIMITS.inbox.default },
  'Person.messagesConnection': { argument: 'first', min: 1, max: LIST_LIMITS.inbox.max, default: LIST_LIMITS.inbox.default }
} as const satisfies Record<string, ListArgument>

export type ListField = keyof typeof LIST_ARGUMENTS

/** A list's limit: as given, or its default when absent or an explicit null ("no preference"). */
export const listLimit = (field: ListField, given: unknown): number => typeof given === 'number' ? given : LIST_ARGUMENTS[field].default

export class ArgumentError extends GraphQLError {
  constructor (coordinate: string, argument: string, problem: string, inner?: string) {
    const field = coordinate.split('.')[1] ?? coordinate
    super(`${field}(${argument}:) ${problem}`, {
      extensions: { code: 'VALIDATION_FAILED', field: [field, argument, ...(inner ? [inner] : [])].join('.') }
    })
  }
}

/** Checks one argument's value (null and absent never reach it); throws the problem, in words. */
type Rule = (value: unknown) => string | undefined

const integer = (min: number, max: number): Rule => (value) =>
  typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
    ? undefined
    : `must be an integer from ${min} to ${max}, not ${String(value)}`

const text = (min: number, max: number): Rule => (value) => {
  const length = typeof value === 'string' ? characterCount(value) : -1
  return length >= min && length <= max ? undefined : `must be ${min} to ${max} characters`
}

const anId: Rule = (value) => typeof value === 'string' && isId(value) ? undefined : 'must be an id this service issued'

/**
 * The domain's own check of an input (the one the use case runs again): its
 * error names the input field, so the message names argument and field.
 */
class DomainRuleError extends Error {
  constructor (readonly field: string | undefined, message: string) { super(message) }
}
const domain = (check: (value: never) => unknown): Rule => (value) => {
  try {
    check(value as never)
    return undefined
  } catch (error) {
    if (!isDomainError(error) || error.code !== 'VALIDATION_FAILED') throw error
    throw new DomainRuleError(error.field, error.message)
  }
}

const listRule = (list: ListArgument): Rule => integer(list.min, list.max)

/** The rules, by field coordinate and argument name. A field or argument not listed takes any value of its type. */
const RULES: Record<string, Record<string, Rule>> = {
  'Query.people': { limit: listRule(LIST_ARGUMENTS['Query.people']), name: text(1, PERSON_LIMITS.nameLength), cursor: text(1, CURSOR_LENGTH) },
  'Query.peopleConnection': { first: listRule(LIST_ARGUMENTS['Query.peopleConnection']), name: text(1, PERSON_LIMITS.nameLength), after: text(1, CURSOR_LENGTH) },
  'Person.friends': { limit: listRule(LIST_ARGUMENTS['Person.friends']) },
  'Person.friendsConnection': { first: listRule(LIST_ARGUMENTS['Person.friendsConnection']), after: text(1, CURSOR_LENGTH) },
  'Person.messages': { limit: listRule(LIST_ARGUMENTS['Person.messages']) },
  'Person.messagesConnection': { first: listRule(LIST_ARGUMENTS['Person.messagesConnection']), after: text(1, CURSOR_LENGTH) },
  'Mutation.createPerson': { input: domain((input: PersonInput) => checkPersonFields(input)) },
  'Mutation.updatePerson': { input: domain((patch: PersonPatch) => { checkPersonPatch(patch) }) },
  'Mutation.sendMessage': { text: domain(checkMessageText) },
  // Lookups by id answer null or PERSON_NOT_FOUND for an id that names
  // nothing, as REST's 404 does; a subscription has no answer to give, so an
  // id that can never match is refused rather than listened for forever.
  'Subscription.messageSent': { personId: anId }
}

const checkArgument = (coordinate: string, argument: string, rule: Rule, value: unknown): void => {
  if (value === null || value === undefined) return
  let problem: string | undefined
  try {
    problem = rule(value)
  } catch (error) {
    if (!(error instanceof DomainRuleError)) throw error
    throw new ArgumentError(coordinate, argument, error.message, error.field === argument ? undefined : error.field)
  }
  if (problem !== undefined) throw new ArgumentError(coordinate, argument, problem)
}

interface Use { coordinate: string, definition: GraphQLField<unknown, unknown>, node: FieldNode, rules: Record<string, Rule> }

const checkUse = ({ coordinate, definition, node, rules }: Use, variables: Readonly<Record<string, unknown>>): void => {
  // graphql-js' own coercion, as execution will do it: defaults, variables, input objects.
  const values = getArgumentValues(definition, node, variables)
  for (const [argument, rule] of Object.entries(rules)) checkArgument(coordinate, argument, rule, values[argument])
}

const usesVariables = (node: FieldNode): boolean => {
  let found = false
  for (const argument of node.arguments ?? []) {
    visit(argument.value, { Variable () { found = true } })
  }
  return found
}

/** Every use of a ruled field in the operation, fragments where they are spread (each walked once per type). */
const usesOf = (schema: GraphQLSchema, operation: OperationDefinitionNode, fragments: Readonly<Record<string, FragmentDefinitionNode>>): Use[] => {
  const uses: Use[] = []
  const walked = new Set<string>()
  const walk = (selectionSet: SelectionSetNode, parent: GraphQLObjectType): void => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const definition = parent.getFields()[selection.name.value]
        if (definition === undefined) continue
        const coordinate = `${parent.name}.${selection.name.value}`
        const rules = RULES[coordinate]
        if (rules !== undefined) uses.push({ coordinate, definition, node: selection, rules })
        const type = getNamedType(definition.type)
        if (selection.selectionSet !== undefined && isObjectType(type)) walk(selection.selectionSet, type)
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition === undefined ? parent : schema.getType(selection.typeCondition.name.value)
        if (isObjectType(type)) walk(selection.selectionSet, type)
      } else {
        const fragment = fragments[selection.name.value]
        if (fragment === undefined || walked.has(fragment.name.value)) continue
        walked.add(fragment.name.value)
        const type = schema.getType(fragment.typeCondition.name.value)
        if (isObjectType(type)) walk(fragment.selectionSet, type)
      }
    }
  }
  const root = schema.getRootType(operation.operation)
  if (root) walk(operation.selectionSet, root)
  return uses
}

const NO_VARIABLES: Readonly<Record<string, unknown>> = Object.freeze({})

/**
 * The argument limits of one operation. Literal arguments are checked here,
 * once (throws an ArgumentError naming the first one outside its limit);
 * the check returned runs on every request for the arguments its variables
 * feed, with the coerced variables.
 */
export const argumentChecks = (
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>
): (variables: Record<string, unknown>) => void => {
  const uses = usesOf(schema, operation, fragments)
  for (const use of uses) if (!usesVariables(use.node)) checkUse(use, NO_VARIABLES)
  const fed = uses.filter((use) => usesVariables(use.node))
  return (variables) => {
    for (const use of fed) checkUse(use, variables)
  }
}
