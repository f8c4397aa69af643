import { hasScope, isDomainError, type Caller } from '@people-service/domain'
import {
  getDirectiveValues, getNamedType, GraphQLError, GraphQLIncludeDirective, GraphQLSkipDirective, isObjectType, isInterfaceType,
  Kind, visit, type DirectiveNode, type FieldNode, type FragmentDefinitionNode, type FragmentSpreadNode, type GraphQLCompositeType,
  type GraphQLSchema, type InlineFragmentNode, type OperationDefinitionNode, type SelectionSetNode
} from 'graphql'
import { check, GRAPHQL_FIELD_OPERATIONS, POLICY, scopeToSee } from '../auth/policy.js'

/*
 * Per-field authorization, before anything runs: the operation's selection
 * is walked with the schema's types (fragments where they are spread, fields
 * skipped by @skip/@include left out, as execution would) and every field
 * that has a row in GRAPHQL_FIELD_OPERATIONS is checked for the caller with
 * the same check and table REST's hook uses (`authorize`), and every field of
 * a guarded type against VISIBILITY, as REST's serializers read it. A
 * mutation the caller may not run, or whose answer it may not see, therefore
 * never runs, and a query never half-runs.
 */

type FieldCoordinate = keyof typeof GRAPHQL_FIELD_OPERATIONS

const isGoverned = (coordinate: string): coordinate is FieldCoordinate => Object.hasOwn(GRAPHQL_FIELD_OPERATIONS, coordinate)

/** One selected field: `Type.field` and the first place the document selects it. */
export interface SelectedField { coordinate: string, node: FieldNode }

type Variables = Readonly<Record<string, unknown>>

/**
 * Would execution run this selection? An undecidable directive counts as
 * "yes": when in doubt, a field is checked.
 */
export const included = (node: { directives?: readonly DirectiveNode[] | undefined }, variables: Variables): boolean => {
  if (node.directives === undefined || node.directives.length === 0) return true
  try {
    if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false
    if (getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if === false) return false
  } catch {
    return true
  }
  return true
}

/**
 * Every field an operation selects, as `Type.field` with its first node, in
 * document order. `variables` are the coerced values.
 */
export const selectedFields = (
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>,
  variables: Variables
): SelectedField[] => {
  const found = new Map<string, FieldNode>()
  // A fragment selects the same fields wherever it is spread: walked once.
  const walked = new Set<string>()

  const walk = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType): void => {
    for (const selection of selectionSet.selections) {
      if (!included(selection, variables)) continue
      switch (selection.kind) {
        case Kind.FIELD: field(selection, parent); break
        case Kind.INLINE_FRAGMENT: inline(selection, parent); break
        case Kind.FRAGMENT_SPREAD: spread(selection); break
      }
    }
  }
  const field = (node: FieldNode, parent: GraphQLCompositeType): void => {
    const name = node.name.value
    if (name.startsWith('__')) return // introspection: governed by the endpoint's own row
    const coordinate = `${parent.name}.${name}`
    if (!found.has(coordinate)) found.set(coordinate, node)
    const definition = isObjectType(parent) || isInterfaceType(parent) ? parent.getFields()[name] : undefined
    if (definition === undefined || node.selectionSet === undefined) return
    const type = getNamedType(definition.type)
    if (isObjectType(type) || isInterfaceType(type)) walk(node.selectionSet, type)
  }
  const inline = (node: InlineFragmentNode, parent: GraphQLCompositeType): void => {
    const type = node.typeCondition === undefined ? parent : schema.getType(node.typeCondition.name.value)
    if (isObjectType(type) || isInterfaceType(type)) walk(node.selectionSet, type)
  }
  const spread = (node: FragmentSpreadNode): void => {
    const name = node.name.value
    const fragment = fragments[name]
    if (fragment === undefined || walked.has(name)) return
    walked.add(name)
    const type = schema.getType(fragment.typeCondition.name.value)
    if (isObjectType(type) || isInterfaceType(type)) walk(fragment.selectionSet, type)
  }

  const root = schema.getRootType(operation.operation)
  if (root !== undefined && root !== null) walk(operation.selectionSet, root)
  return [...found].map(([coordinate, node]) => ({ coordinate, node }))
}

/** A document's fragments by name. */
export const fragmentsOf = (definitions: readonly { kind: Kind }[]): Record<string, FragmentDefinitionNode> =>
  Object.fromEntries(definitions
    .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
    .map((d) => [d.name.value, d]))

/**
 * The fields of the operation this caller may not use, one GraphQL error
 * each (code FORBIDDEN); empty when everything is allowed. A root field
 * without a row in the table is refused: nothing becomes reachable by
 * omission.
 */
export const deniedFields = (caller: Caller, fields: readonly SelectedField[], rootTypes: ReadonlySet<string>): GraphQLError[] => {
  const denied: GraphQLError[] = []
  for (const { coordinate, node } of fields) {
    if (!isGoverned(coordinate)) {
      const [type = '', field = ''] = coordinate.split('.')
      if (rootTypes.has(type)) {
        denied.push(new GraphQLError(`${coordinate} has no row in the policy table`, { nodes: [node], extensions: { code: 'FORBIDDEN' } }))
        continue
      }
      // A field of a guarded type (a person's name, their address) leaves
      // only for a caller who may see it, whichever field reached it.
      const scope = scopeToSee(type, field)
      if (scope !== undefined && !hasScope(caller, scope)) {
        denied.push(new GraphQLError(`${coordinate} needs the ${scope} scope`, { nodes: [node], extensions: { code: 'FORBIDDEN' } }))
      }
      continue
    }
    try {
      // `authorize`'s check, naming the field rather than the REST operation.
      check(caller, POLICY[GRAPHQL_FIELD_OPERATIONS[coordinate]], coordinate)
    } catch (error) {
      if (!isDomainError(error)) throw error
      denied.push(new GraphQLError(error.message, { nodes: [node], extensions: { code: error.code } }))
    }
  }
  return denied
}

/** The names of the schema's root types (Query, Mutation, Subscription). */
export const rootTypesOf = (schema: GraphQLSchema): Set<string> =>
  new Set([schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()].flatMap((type) => (type ? [type.name] : [])))

/** The variables an operation's @skip and @include read: they decide which fields run. */
const directiveVariablesOf = (operation: OperationDefinitionNode, fragments: Readonly<Record<string, FragmentDefinitionNode>>): string[] => {
  const names = new Set<string>()
  const visitor = {
    Directive (node: DirectiveNode) {
      for (const argument of node.arguments ?? []) visit(argument.value, { Variable (variable) { names.add(variable.name.value) } })
    }
  }
  for (const node of [operation, ...Object.values(fragments)]) visit(node, visitor)
  return [...names]
}

/**
 * What `check` reads of a caller: its kind and its scopes. Two callers with
 * the same are refused the same fields.
 */
const scopeKeyOf = (caller: Caller): string => `${caller.kind} ${caller.scopes.join(' ')}`

const DENIALS_PER_OPERATION = 64

/**
 * Who may run one operation: `(caller, variables)` answers the refusals of
 * the fields the caller may not use (empty: it may run). The fields an
 * operation selects depend on the document alone, or also on the variables
 * of its @skip/@include; the refusals, on those fields and the caller's
 * scopes. Each is worked out once per operation, set of scopes and values
 * of those variables, and reused.
 */
export const operationAuthorization = (
  schema: GraphQLSchema,
  operation: OperationDefinitionNode,
  fragments: Readonly<Record<string, FragmentDefinitionNode>>
): (caller: Caller, variables: Record<string, unknown>) => readonly GraphQLError[] => {
  const rootTypes = rootTypesOf(schema)
  const deciding = directiveVariablesOf(operation, fragments)
  const fixed = deciding.length === 0 ? selectedFields(schema, operation, fragments, {}) : undefined
  const denials = new Map<string, readonly GraphQLError[]>()
  return (caller, variables) => {
    const key = fixed === undefined ? `${scopeKeyOf(caller)} ${JSON.stringify(deciding.map((name) => variables[name]))}` : scopeKeyOf(caller)
    let denied = denials.get(key)
    if (denied === undefined) {
      denied = deniedFields(caller, fixed ?? selectedFields(schema, operation, fragments, variables), rootTypes)
      if (denials.size >= DENIALS_PER_OPERATION) denials.clear()
      denials.set(key, denied)
    }
    return denied
  }
}

/**
 * Fails the start when a root field of the schema has no row in the policy
 * table, as a REST route without one does.
 */
export const assertEveryRootFieldGoverned = (schema: GraphQLSchema): void => {
  const missing = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()]
    .flatMap((type) => (type ? Object.keys(type.getFields()).map((name) => `${type.name}.${name}`) : []))
    .filter((coordinate) => !isGoverned(coordinate))
  if (missing.length > 0) {
    throw new Error(`GraphQL fields without a row in GRAPHQL_FIELD_OPERATIONS (auth/policy.ts): ${missing.join(', ')}`)
  }
}
