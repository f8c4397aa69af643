import { LIST_LIMITS } from '@people-service/domain'
import { GraphQLError, Kind, type ASTVisitor, type SelectionSetNode, type ValidationContext, type ValidationRule } from 'graphql'
import type { LimitedListField } from './schema.js'

/** What a single GraphQL request may ask for; checked before anything runs. */
export const GRAPHQL_LIMITS = {
  /** Worst-case cost budget (see cost.ts); the server reads GRAPHQL_MAX_COST. */
  defaultMaxCost: 50_000,
  /** Nesting of fields, introspection excluded. */
  maxDepth: 10,
  /** Lexical tokens in one document: bounds parsing work before anything else. */
  maxTokens: 2_000,
  /** Aliased fields in one document: aliases are how one field is asked for many times. */
  maxAliases: 30,
  /** Directive uses in one document. */
  maxDirectives: 30,
  /** Runs of one query text before graphql-jit compiles it (see bench/graphql.ts). */
  jitAfter: 1
} as const

/** The range each list's `limit` argument accepts, and its default. */
export const LIST_ARGUMENTS: Record<LimitedListField, { min: number, max: number, default: number }> = {
  'Query.people': { min: 1, max: LIST_LIMITS.people.max, default: LIST_LIMITS.people.default },
  'Person.friends': { min: 0, max: LIST_LIMITS.friends.max, default: LIST_LIMITS.friends.default },
  'Person.messages': { min: 0, max: LIST_LIMITS.inbox.max, default: LIST_LIMITS.inbox.default }
}

const error = (message: string, code: string): GraphQLError => new GraphQLError(message, { extensions: { code } })

/** Refuses a document with more than `max` aliased fields. */
export const maxAliasesRule = (max: number): ValidationRule => (context: ValidationContext): ASTVisitor => {
  let aliases = 0
  return {
    Field (node) {
      if (node.alias !== undefined) aliases++
    },
    Document: {
      leave () {
        if (aliases > max) context.reportError(error(`the query uses ${aliases} aliases; at most ${max} are allowed`, 'TOO_MANY_ALIASES'))
      }
    }
  }
}

/** Refuses a document with more than `max` directive uses. */
export const maxDirectivesRule = (max: number): ValidationRule => (context: ValidationContext): ASTVisitor => {
  let directives = 0
  return {
    Directive () { directives++ },
    Document: {
      leave () {
        if (directives > max) context.reportError(error(`the query uses ${directives} directives; at most ${max} are allowed`, 'TOO_MANY_DIRECTIVES'))
      }
    }
  }
}

/**
 * Refuses operations nested deeper than `max` fields. Fragments count at the
 * depth they are spread; introspection fields (`__schema`, `__type`) do not
 * count, so GraphiQL's schema query, deep by nature, still works.
 */
export const maxDepthRule = (max: number): ValidationRule => (context: ValidationContext): ASTVisitor => {
  // A fragment is as deep wherever it is spread: measured once, so a document
  // that spreads fragments into fragments cannot make this walk explode.
  const fragmentDepths = new Map<string, number>()
  const depthOf = (selectionSet: SelectionSetNode | undefined, visiting: Set<string>): number => {
    let deepest = 0
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) {
        if (selection.name.value.startsWith('__')) continue
        deepest = Math.max(deepest, 1 + depthOf(selection.selectionSet, visiting))
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        deepest = Math.max(deepest, depthOf(selection.selectionSet, visiting))
      } else {
        const name = selection.name.value
        const fragment = context.getFragment(name)
        // Unknown and cyclic fragments are reported by the standard rules.
        if (!fragment || visiting.has(name)) continue
        let fragmentDepth = fragmentDepths.get(name)
        if (fragmentDepth === undefined) {
          visiting.add(name)
          fragmentDepth = depthOf(fragment.selectionSet, visiting)
          visiting.delete(name)
          fragmentDepths.set(name, fragmentDepth)
        }
        deepest = Math.max(deepest, fragmentDepth)
      }
      if (deepest > max) return deepest
    }
    return deepest
  }
  return {
    OperationDefinition (node) {
      const depth = depthOf(node.selectionSet, new Set())
      if (depth > max) {
        const name = node.name?.value ?? 'the operation'
        context.reportError(new GraphQLError(`${name} is ${depth} levels deep; at most ${max} are allowed`, { nodes: node, extensions: { code: 'QUERY_TOO_DEEP' } }))
      }
      return false
    }
  }
}

/**
 * Mercurius treats a `query` that does not parse as GraphQL as a JSON-encoded
 * AST and executes that, skipping the token cap. Anything that is valid JSON
 * is never a valid GraphQL document, so such a query is refused before
 * Mercurius tries.
 */
export const isJsonEncoded = (source: string): boolean => {
  try {
    JSON.parse(source)
    return true
  } catch {
    return false
  }
}
