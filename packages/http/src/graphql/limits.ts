import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases'
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth'
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives'
import {
  GraphQLError, Kind, NoSchemaIntrospectionCustomRule, type DocumentNode, type FragmentDefinitionNode, type OperationDefinitionNode, type SelectionSetNode,
  type ValidationContext, type ValidationRule
} from 'graphql'

/** What a single GraphQL document may ask for; checked before anything runs, the same over HTTP and WebSocket. */
export const GRAPHQL_LIMITS = {
  /**
   * Worst-case cost budget (see cost.ts); the server reads GRAPHQL_MAX_COST.
   * Calibrated by `npm run bench:cost`: the most expensive query it admits
   * answers in under 100 ms on the bench data set.
   */
  defaultMaxCost: 5_000,
  /** Characters of one document, checked before it is read at all: a 10,000-character message text fits. */
  maxLength: 32_768,
  /** Lexical tokens in one document: bounds parsing work before anything else. */
  maxTokens: 2_000,
  /** Nesting of fields, introspection excluded. */
  maxDepth: 10,
  /** Aliased fields in one operation, fragments counted where spread: aliases are how one field is asked for many times. */
  maxAliases: 30,
  /** Directive uses in one operation, fragments counted where spread. */
  maxDirectives: 30,
  /**
   * Selections of one operation (fields, fragment spreads, inline
   * fragments), fragments counted where spread: the nodes the cost walk
   * reads (graphql-query-complexity's own default cap).
   */
  maxSelections: 10_000,
  /**
   * Fields of one response name in one selection set once fragments and
   * same-named fields are merged (repeatedFields below): a client repeats
   * `id` in a few fragments of one selection, never dozens of times.
   */
  maxRepeats: 20,
  /**
   * Runs of one operation before graphql-jit compiles it (plan.ts; `npm run
   * bench` measures both): the operations clients send again and again.
   * After one run, a caller sending new documents twice each had every one
   * compiled, some 80 KB of garbage an operation: 25,600 requests grew the
   * server to 1.1 GB before V8 collected it.
   */
  jitAfter: 10,
  /**
   * Selections (as maxSelections counts them) past which an operation is
   * never compiled (plan.ts): compiling and first running took about 37 µs
   * a selection, so 200 hold the event loop some 7 ms, once.
   */
  jitMaxSelections: 200
} as const

const refusal = (message: string, code: string): GraphQLError => new GraphQLError(message, { extensions: { code } })

/**
 * GraphQL Armor's rules, reporting our codes: Armor throws its error out of
 * validation (a "Syntax Error" with no code) unless told to hand it over.
 */
const reportAs = (code: string) => ({
  propagateOnRejection: false,
  onReject: [(context: ValidationContext | null, error: GraphQLError) => {
    context?.reportError(refusal(error.message.replace(/^Syntax Error: /, ''), code))
  }]
})

/**
 * The validation rules every document passes beside graphql-js' own, over
 * HTTP and WebSocket alike, once per document text (documents.ts).
 */
export const documentRules = (production: boolean): ValidationRule[] => [
  // Fragments count at the depth they are spread; `__schema` does not count, so GraphiQL's schema query runs.
  maxDepthRule({ n: GRAPHQL_LIMITS.maxDepth, flattenFragments: true, ignoreIntrospection: true, ...reportAs('QUERY_TOO_DEEP') }),
  // Aliased `__typename` too: every alias is one more field to answer.
  maxAliasesRule({ n: GRAPHQL_LIMITS.maxAliases, allowList: [], ...reportAs('TOO_MANY_ALIASES') }),
  maxDirectivesRule({ n: GRAPHQL_LIMITS.maxDirectives, ...reportAs('TOO_MANY_DIRECTIVES') }),
  ...(production ? [NoSchemaIntrospectionCustomRule] : [])
]

const fragmentsOf = (document: DocumentNode): Map<string, FragmentDefinitionNode> => {
  const fragments = new Map<string, FragmentDefinitionNode>()
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition)
  return fragments
}

/**
 * Counts the selections of a selection set of `document`, its fragments
 * counted where they are spread, each fragment walked once.
 */
const selectionCounter = (document: DocumentNode): (selectionSet: SelectionSetNode | undefined) => number => {
  const fragments = fragmentsOf(document)
  const spread = new Map<string, number>()
  const selectionsIn = (selectionSet: SelectionSetNode | undefined): number => {
    let selections = 0
    for (const selection of selectionSet?.selections ?? []) {
      selections += 1 + (selection.kind === Kind.FRAGMENT_SPREAD ? selectionsOfFragment(selection.name.value) : selectionsIn(selection.selectionSet))
    }
    return selections
  }
  const selectionsOfFragment = (name: string): number => {
    const known = spread.get(name)
    if (known !== undefined) return known
    spread.set(name, 0)
    const selections = selectionsIn(fragments.get(name)?.selectionSet)
    spread.set(name, selections)
    return selections
  }
  return selectionsIn
}

/** The selections of one operation of `document`, fragments counted where spread. */
export const selectionsOf = (document: DocumentNode, operation: OperationDefinitionNode): number =>
  selectionCounter(document)(operation.selectionSet)

/**
 * The refusals of operations with more than maxSelections selections once
 * their fragments are spread where they are used, checked before
 * validation. 30 fragments each spreading the next twice are a 1 KB
 * document of two billion selections: every walk that spreads fragments
 * (the validation rules, the cost, the SQL plan) worked through them until
 * its own limit, 10–40 ms a time, or without one for as long as 2^30 steps
 * take. Here each fragment is counted once, in one pass over the document;
 * a fragment met again inside itself (a cycle, which validation refuses)
 * adds nothing more.
 */
export const tooManySelections = (document: DocumentNode): GraphQLError[] => {
  const selectionsIn = selectionCounter(document)
  const most = GRAPHQL_LIMITS.maxSelections
  return document.definitions.flatMap((definition) => {
    if (definition.kind !== Kind.OPERATION_DEFINITION || selectionsIn(definition.selectionSet) <= most) return []
    const operation = definition.name === undefined ? 'the operation' : `operation ${definition.name.value}`
    return [refusal(`${operation} has more than ${most.toLocaleString('en')} fields and fragments once its fragments are spread`, 'TOO_MANY_SELECTIONS')]
  })
}

/**
 * The refusals graphql-js gives a document whose fragments are not each
 * defined once and spread by some operation (`There can be only one
 * fragment named …`, `Fragment … is never used.`), given before the rest
 * of validation: graphql-js' rules run over every fragment all the same,
 * and 95 fragments nobody spreads, each spreading the next three (a 6 KB
 * document), took its overlapping-fields rule 11–14 ms on each new text.
 * Every fragment left is reached from an operation, so the walks that
 * follow (repeatedFields) need start from the operations only.
 */
export const fragmentsNotInUse = (document: DocumentNode): GraphQLError[] => {
  const definitions = document.definitions.filter((definition) => definition.kind === Kind.FRAGMENT_DEFINITION)
  const first = new Map<string, FragmentDefinitionNode>()
  const errors: GraphQLError[] = []
  for (const definition of definitions) {
    const known = first.get(definition.name.value)
    if (known === undefined) first.set(definition.name.value, definition)
    else errors.push(new GraphQLError(`There can be only one fragment named "${definition.name.value}".`, { nodes: [known.name, definition.name] }))
  }
  // The fragments spread, from the operations down, each read once.
  const used = new Set<string>()
  const pending: SelectionSetNode[] = document.definitions.flatMap((definition) => definition.kind === Kind.OPERATION_DEFINITION ? [definition.selectionSet] : [])
  for (let selectionSet = pending.pop(); selectionSet !== undefined; selectionSet = pending.pop()) {
    for (const selection of selectionSet.selections) {
      if (selection.kind !== Kind.FRAGMENT_SPREAD) {
        if (selection.selectionSet !== undefined) pending.push(selection.selectionSet)
      } else if (!used.has(selection.name.value)) {
        used.add(selection.name.value)
        const fragment = first.get(selection.name.value)
        if (fragment !== undefined) pending.push(fragment.selectionSet)
      }
    }
  }
  for (const definition of first.values()) {
    if (!used.has(definition.name.value)) errors.push(new GraphQLError(`Fragment "${definition.name.value}" is never used.`, { nodes: definition }))
  }
  return errors
}

/** The fragments a selection was reached through, innermost first. */
interface Via { fragment: string, outer: Via | undefined }

const isWithin = (via: Via | undefined, fragment: string): boolean => {
  for (let at = via; at !== undefined; at = at.outer) if (at.fragment === fragment) return true
  return false
}

/** A selection set to merge, and the fragments it was reached through. */
interface Reached { selectionSet: SelectionSetNode, via: Via | undefined }

/**
 * The refusal of a document in which one response name is asked for more
 * than maxRepeats times in one selection set, as graphql-js' "fields can
 * be merged" rule merges them: the fields written there, those of inline
 * fragments and of fragments spread there (each fragment once), and below
 * the top, the sub-selections of every same-named field above. That rule
 * compares every pair of such fields, so its work grows with the square of
 * their number, and a new document is validated on every request it is
 * sent in, charged one request: 20 `friends` each selecting 20 `friends`
 * (400 merged, 76,000 pairs; a 6 KB document) held the event loop 70 ms,
 * 200 fragments each selecting `name` 25 ms.
 *
 * Checked after fragmentsNotInUse, so walking the operations reaches every
 * fragment. A fragment met again within itself (a cycle, which validation
 * refuses) adds nothing more. The walk takes at most maxSelections steps
 * for the whole document, and refuses a document it could not finish:
 * merging each fragment once per selection set, it comes to no more than
 * tooManySelections counts for an operation alone.
 */
export const repeatedFields = (document: DocumentNode): GraphQLError[] => {
  const fragments = fragmentsOf(document)
  let steps = 0
  /** The first response name over the limit in `group` or below it; `true` when the walk ran out of steps. */
  const overIn = (group: readonly Reached[]): string | true | undefined => {
    const names = new Map<string, { fields: number, below: Reached[] }>()
    const spread = new Set<string>()
    const merge = ({ selectionSet, via }: Reached): boolean => {
      for (const selection of selectionSet.selections) {
        if (++steps > GRAPHQL_LIMITS.maxSelections) return false
        if (selection.kind === Kind.FIELD) {
          const name = (selection.alias ?? selection.name).value
          let repeats = names.get(name)
          if (repeats === undefined) names.set(name, repeats = { fields: 0, below: [] })
          repeats.fields += 1
          if (selection.selectionSet !== undefined) repeats.below.push({ selectionSet: selection.selectionSet, via })
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          if (!merge({ selectionSet: selection.selectionSet, via })) return false
        } else {
          const name = selection.name.value
          const fragment = fragments.get(name)
          if (fragment === undefined || spread.has(name) || isWithin(via, name)) continue
          spread.add(name)
          if (!merge({ selectionSet: fragment.selectionSet, via: { fragment: name, outer: via } })) return false
        }
      }
      return true
    }
    for (const reached of group) if (!merge(reached)) return true
    for (const [name, { fields, below }] of names) {
      if (fields > GRAPHQL_LIMITS.maxRepeats) return name
      const over = below.length === 0 ? undefined : overIn(below)
      if (over !== undefined) return over
    }
    return undefined
  }
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.OPERATION_DEFINITION) continue
    const over = overIn([{ selectionSet: definition.selectionSet, via: undefined }])
    if (over === true) {
      return [refusal(`the document has more than ${GRAPHQL_LIMITS.maxSelections.toLocaleString('en')} fields and fragments once its fragments are merged where spread`, 'TOO_MANY_SELECTIONS')]
    }
    if (over !== undefined) {
      const where = definition.name === undefined ? 'the operation' : `operation ${definition.name.value}`
      return [refusal(`${where} asks for ${JSON.stringify(over)} more than ${GRAPHQL_LIMITS.maxRepeats} times in one selection set, counting its fragments and the selections of same-named fields merged there`, 'TOO_MANY_REPEATS')]
    }
  }
  return []
}

/**
 * Whether a `query` that did not parse is JSON: a client sending a
 * ready-made syntax tree (which some servers run as one, past the token
 * cap) is told that it is refused, and why. Anything that is valid JSON is
 * never a valid GraphQL document, so only a source that failed to parse is
 * probed, once (documents.ts remembers the refusal).
 */
export const isJsonEncoded = (source: string): boolean => {
  try {
    JSON.parse(source)
    return true
  } catch {
    return false
  }
}

/**
 * The refusal of a document too long to be read at all, checked before it
 * is parsed; the token cap applies in the parse itself (graphql-js'
 * `maxTokens`, which stops there).
 */
export const tooLong = (source: string): GraphQLError | undefined => source.length > GRAPHQL_LIMITS.maxLength
  ? refusal(`the document is ${source.length} characters long; at most ${GRAPHQL_LIMITS.maxLength} are allowed: pass long values as variables`, 'DOCUMENT_TOO_LARGE')
  : undefined

/** The refusal of a `query` that is JSON rather than a GraphQL document. */
export const jsonInPlaceOfDocument = (): GraphQLError => refusal('query must be a GraphQL document, not JSON', 'GRAPHQL_PARSE_FAILED')
