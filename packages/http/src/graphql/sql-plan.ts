import { isDomainError, type AddressEntry, type AddressScalar, type PersonEntry, type PersonScalar, type PersonSelection, type ProjectPeopleInput } from '@people-service/domain'
import {
  getArgumentValues, Kind,
  type ExecutionResult, type FieldNode, type FragmentDefinitionNode, type GraphQLField, type GraphQLSchema,
  type OperationDefinitionNode, type SelectionSetNode, type ValueNode
} from 'graphql'
import type { FastifyBaseLogger } from 'fastify'
import { listLimit } from './argument-limits.js'
import { included } from './authorization.js'
import type { GraphQLContext } from './context.js'
import type { Plan } from './plan.js'
import { ResponseBudget, ResponseTooLarge } from '../response-size.js'
import { CHUNK_ROWS } from '../turns.js'

/*
 * The plan of a query the database can answer whole: `person(id)` and
 * `people(limit, cursor)` with Person's fields, the address, and friends to
 * any depth, under any aliases, through fragments and @include/@skip. Each
 * root field becomes one statement that builds its JSON in the database
 * (PersonProjections), and the answer's `data` is those texts put side by
 * side, not parsed here. The resolvers stay the reference: an operation that
 * asks for anything else (messages, a name filter, the connection, a
 * mutation) is not compiled, and a request whose run meets any error runs
 * again with the resolvers, so its errors are theirs.
 */

/** Data the database wrote: the `data` of a result without errors, as JSON text. */
export class JsonData {
  readonly text: string
  constructor (text: string) {
    this.text = text
  }
}

type Variables = Record<string, unknown>

/**
 * Rows one compiled request may read, at worst, over all its root fields:
 * on SQLite its statements run on the event loop one after another without
 * a turn between them, where the resolvers read big levels in chunks that
 * take turns (turns.ts). Beyond this a request runs with the resolvers.
 */
export const MOST_ROWS_PER_REQUEST = 4 * CHUNK_ROWS

/** Person's and Address's own fields: columns of the person's row. */
const PERSON_SCALARS: ReadonlySet<string> = new Set<PersonScalar>(['id', 'name', 'age', 'email'])
const ADDRESS_SCALARS: ReadonlySet<string> = new Set<AddressScalar>(['street', 'city', 'country'])
const isPersonScalar = (name: string): name is PersonScalar => PERSON_SCALARS.has(name)
const isAddressScalar = (name: string): name is AddressScalar => ADDRESS_SCALARS.has(name)

type Fragments = Readonly<Record<string, FragmentDefinitionNode>>

/**
 * The fields of a selection set by response key, in the order execution
 * gives them (graphql-js' collectFields): fields under one key merged,
 * fragments spread where they stand, what @skip/@include leave out left out.
 * The schema has no interfaces or unions, so every fragment that validated
 * applies.
 */
const collectFields = (
  selectionSet: SelectionSetNode, fragments: Fragments, variables: Variables,
  fields = new Map<string, FieldNode[]>(), visited = new Set<string>()
): Map<string, FieldNode[]> => {
  for (const selection of selectionSet.selections) {
    if (!included(selection, variables)) continue
    if (selection.kind === Kind.FIELD) {
      const key = selection.alias?.value ?? selection.name.value
      const same = fields.get(key)
      if (same === undefined) fields.set(key, [selection])
      else same.push(selection)
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      collectFields(selection.selectionSet, fragments, variables, fields, visited)
    } else {
      const name = selection.name.value
      const fragment = fragments[name]
      if (visited.has(name) || fragment === undefined) continue
      visited.add(name)
      collectFields(fragment.selectionSet, fragments, variables, fields, visited)
    }
  }
  return fields
}

/** The selection sets of every field under one key, as one. */
const merged = (nodes: readonly FieldNode[]): SelectionSetNode => ({
  kind: Kind.SELECTION_SET,
  selections: nodes.flatMap((node) => node.selectionSet?.selections ?? [])
})

/**
 * Everything an operation's shape depends on, checked once: the fields are
 * all ones the plan knows (whatever @skip/@include decide), and the
 * variables that @skip/@include or a nested `limit:` read are listed, so a
 * request's selection is made once per values of those.
 */
interface Shape {
  /** Variables the selection (not the root arguments) depends on. */
  variables: Set<string>
}

const ROOT_FIELDS = new Set(['person', 'people', '__typename'])

const variablesIn = (value: ValueNode, into: Set<string>): void => {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value)
  else if (value.kind === Kind.LIST) for (const item of value.values) variablesIn(item, into)
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) variablesIn(field.value, into)
}

type Level = 'query' | 'person' | 'address'

/**
 * What a fragment spread at a level came to: each fragment is walked once
 * per level, however often it is spread. Walked at every spread, a chain of
 * fragments each spreading the next twice (30 of them: a 1 KB document)
 * took 2^30 steps before any limit was checked. A spread met again while
 * its fragment is still being walked (a cycle, which validation refuses
 * later) counts as compilable meanwhile.
 */
type Spread = Map<string, boolean>

/** Whether every field under a selection set, at every depth, is one the plan compiles; collects the variables its shape reads. */
const compilable = (selectionSet: SelectionSetNode, level: Level, fragments: Fragments, shape: Shape, spread: Spread = new Map()): boolean =>
  selectionSet.selections.every((selection) => {
    for (const directive of selection.directives ?? []) {
      if (directive.name.value !== 'skip' && directive.name.value !== 'include') return false
      for (const argument of directive.arguments ?? []) variablesIn(argument.value, shape.variables)
    }
    if (selection.kind === Kind.INLINE_FRAGMENT) return compilable(selection.selectionSet, level, fragments, shape, spread)
    if (selection.kind === Kind.FRAGMENT_SPREAD) {
      const fragment = fragments[selection.name.value]
      if (fragment === undefined) return false
      const key = `${level} ${fragment.name.value}`
      const known = spread.get(key)
      if (known !== undefined) return known
      spread.set(key, true)
      const ok = compilable(fragment.selectionSet, level, fragments, shape, spread)
      spread.set(key, ok)
      return ok
    }
    const name = selection.name.value
    const args = selection.arguments ?? []
    switch (level) {
      case 'query':
        if (!ROOT_FIELDS.has(name)) return false
        // A name filter is a search: the resolvers' path, with its index.
        if (name === 'people' && args.some((argument) => argument.name.value === 'name')) return false
        return selection.selectionSet === undefined || compilable(selection.selectionSet, 'person', fragments, shape, spread)
      case 'person':
        if (name === 'address') return selection.selectionSet !== undefined && compilable(selection.selectionSet, 'address', fragments, shape, spread)
        if (name === 'friends') {
          for (const argument of args) variablesIn(argument.value, shape.variables)
          return selection.selectionSet !== undefined && compilable(selection.selectionSet, 'person', fragments, shape, spread)
        }
        return name === '__typename' || isPersonScalar(name)
      case 'address':
        return name === '__typename' || isAddressScalar(name)
    }
    return false
  })

/** A root field of a compiled operation, its selection made for one set of shape variables. */
type RootField =
  | { kind: 'typename', key: string }
  | { kind: 'person' | 'people', key: string, node: FieldNode, selection: PersonSelection, rowsPerPerson: number }

/** A root field to answer: its JSON key, the rows it reads at worst, its JSON value. */
interface Call {
  key: string
  rows: number
  answer: (context: GraphQLContext) => Promise<string>
}

class SelectionMaker {
  readonly #fragments: Fragments
  readonly #variables: Variables
  readonly #friends: GraphQLField<unknown, unknown>

  constructor (schema: GraphQLSchema, fragments: Fragments, variables: Variables) {
    this.#fragments = fragments
    this.#variables = variables
    const friends = schema.getType('Person')
    if (friends === undefined || !('getFields' in friends)) throw new Error('the schema has no Person type')
    this.#friends = friends.getFields().friends as GraphQLField<unknown, unknown>
  }

  person (selectionSet: SelectionSetNode): PersonSelection {
    const entries: PersonEntry[] = []
    for (const [key, nodes] of collectFields(selectionSet, this.#fragments, this.#variables)) {
      const first = nodes[0] as FieldNode
      const name = first.name.value
      if (name === '__typename') entries.push({ kind: 'constant', key, value: 'Person' })
      else if (name === 'address') entries.push({ kind: 'address', key, selection: this.#address(merged(nodes)) })
      else if (name === 'friends') {
        const { limit } = getArgumentValues(this.#friends, first, this.#variables)
        entries.push({ kind: 'friends', key, limit: listLimit('Person.friends', limit), selection: this.person(merged(nodes)) })
      } else if (isPersonScalar(name)) entries.push({ kind: 'field', key, field: name })
    }
    return entries
  }

  #address (selectionSet: SelectionSetNode): AddressEntry[] {
    return [...collectFields(selectionSet, this.#fragments, this.#variables)].map(([key, nodes]) => {
      const name = (nodes[0] as FieldNode).name.value
      return isAddressScalar(name) ? { kind: 'field', key, field: name } : { kind: 'constant', key, value: 'Address' }
    })
  }
}

/** Rows a selection reads at worst for `owners` people: themselves, and their friends at every depth. */
const rowsOf = (selection: PersonSelection, owners: number): number =>
  selection.reduce((rows, entry) => entry.kind === 'friends' ? rows + rowsOf(entry.selection, owners * entry.limit) : rows, owners)

/** Selections made per values of the shape variables: a few per operation in practice. */
const SHAPES_KEPT = 32

/**
 * One operation's SQL plan (made once per document and operation,
 * prepared-operation.ts): its root fields answered by the projections use
 * cases, one statement each, in parallel as the resolvers run them.
 */
export class SqlPlan {
  readonly #schema: GraphQLSchema
  readonly #node: OperationDefinitionNode
  readonly #fragments: Fragments
  readonly #shapeVariables: readonly string[]
  readonly #fallback: () => Plan
  readonly #people: GraphQLField<unknown, unknown>
  readonly #person: GraphQLField<unknown, unknown>
  readonly #shapes = new Map<string, RootField[]>()

  private constructor (schema: GraphQLSchema, node: OperationDefinitionNode, fragments: Fragments, shape: Shape, fallback: () => Plan) {
    this.#schema = schema
    this.#node = node
    this.#fragments = fragments
    this.#shapeVariables = [...shape.variables]
    this.#fallback = fallback
    const query = schema.getQueryType()
    if (query === null || query === undefined) throw new Error('the schema has no Query type')
    this.#people = query.getFields().people as GraphQLField<unknown, unknown>
    this.#person = query.getFields().person as GraphQLField<unknown, unknown>
  }

  /** The plan of an operation the database can answer whole, or undefined. */
  static of (schema: GraphQLSchema, node: OperationDefinitionNode, fragments: Fragments, fallback: () => Plan): SqlPlan | undefined {
    if (node.operation !== 'query') return undefined
    const shape: Shape = { variables: new Set() }
    if (!compilable(node.selectionSet, 'query', fragments, shape)) return undefined
    return new SqlPlan(schema, node, fragments, shape, fallback)
  }

  async run (context: GraphQLContext, variables: Variables, log: FastifyBaseLogger): Promise<ExecutionResult | JsonData> {
    const calls = this.#fieldsFor(variables).map((field) => this.#call(field, variables))
    if (calls.reduce((rows, call) => rows + call.rows, 0) > MOST_ROWS_PER_REQUEST) return this.#fallback().run(context, variables, log)
    let texts: string[]
    try {
      texts = await Promise.all(calls.map(async ({ key, answer }) => {
        const text = await answer(context)
        // Counted as each root field's text arrives: one past the limit fails the answer.
        context.response.spend(Buffer.byteLength(text))
        return `${key}:${text}`
      }))
    } catch (error) {
      if (error instanceof ResponseTooLarge) return { data: null, errors: [error] }
      // Whatever failed (a cursor this service did not issue, the database
      // away), the resolvers say it as they always have: the same data,
      // paths and codes, an unexpected failure logged and hidden behind the
      // request id. Nothing was written: running the query again is safe.
      // A failure the resolvers may not meet (the plan's own SQL) is logged
      // here, or it would go unseen behind their answer.
      if (!isDomainError(error)) log.warn({ err: error }, 'the SQL plan failed; the resolvers answer instead')
      // The resolvers build the answer afresh: what the plan counted is not in it.
      context.response = new ResponseBudget(context.response.max)
      return this.#fallback().run(context, variables, log)
    }
    return new JsonData(`{${texts.join(',')}}`)
  }

  /** A root field with this request's arguments: the rows it reads at worst, and how it answers. */
  #call (field: RootField, variables: Variables): Call {
    const key = JSON.stringify(field.key)
    if (field.kind === 'typename') return { key, rows: 0, answer: async () => '"Query"' }
    const { selection } = field
    if (field.kind === 'person') {
      const { id } = getArgumentValues(this.#person, field.node, variables)
      return { key, rows: field.rowsPerPerson, answer: async ({ useCases }) => await useCases.projectPerson(id as string, selection) ?? 'null' }
    }
    const { limit, cursor } = getArgumentValues(this.#people, field.node, variables)
    const input: ProjectPeopleInput = {
      ...(typeof limit === 'number' ? { limit } : {}),
      ...(typeof cursor === 'string' ? { cursor } : {})
    }
    return { key, rows: field.rowsPerPerson * listLimit('Query.people', limit), answer: async ({ useCases }) => useCases.projectPeople(input, selection) }
  }

  /** The root fields and their selections for these variables, made once per values of the shape variables. */
  #fieldsFor (variables: Variables): RootField[] {
    const key = this.#shapeVariables.length === 0 ? '' : JSON.stringify(this.#shapeVariables.map((name) => variables[name] ?? null))
    let fields = this.#shapes.get(key)
    if (fields === undefined) {
      fields = this.#make(variables)
      if (this.#shapes.size >= SHAPES_KEPT) this.#shapes.clear()
      this.#shapes.set(key, fields)
    }
    return fields
  }

  #make (variables: Variables): RootField[] {
    const maker = new SelectionMaker(this.#schema, this.#fragments, variables)
    return [...collectFields(this.#node.selectionSet, this.#fragments, variables)].map(([key, nodes]): RootField => {
      const node = nodes[0] as FieldNode
      if (node.name.value === '__typename') return { kind: 'typename', key }
      const selection = maker.person(merged(nodes))
      return { kind: node.name.value === 'person' ? 'person' : 'people', key, node, selection, rowsPerPerson: rowsOf(selection, 1) }
    })
  }
}
