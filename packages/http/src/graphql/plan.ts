import type { FastifyBaseLogger } from 'fastify'
import { execute, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql'
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit'
import { LRUCache } from 'lru-cache'
import type { GraphQLContext } from './context.js'
import type { PreparedOperation } from './prepared-operation.js'
import { GRAPHQL_LIMITS } from './limits.js'
import type { JsonData } from './sql-plan.js'

/** How a checked operation runs: with its coerced variables, in a request's context. */
export interface Plan {
  /** The result, or the `data` of one without errors as the database wrote it; `log` takes what the result cannot say. */
  run(context: GraphQLContext, variables: Record<string, unknown>, log: FastifyBaseLogger): Promise<ExecutionResult | JsonData>
}

// The resolvers are all on the schema's fields; the root value carries nothing.
const ROOT = Object.freeze({})

/**
 * Heap a compiled operation keeps once it has run: some 50–65 KB however
 * small (a review's 40,000 one-field queries), and per selection 2.8–3 KB
 * measured on the function alone, 6.5 KB in the server's resident memory
 * (40 documents of 7,480 selections: +1.9 GB). Counted at the larger.
 */
const COMPILED_BYTES = { operation: 64 * 1024, selection: 6_500 }

/** The heap a compiled operation of so many selections is counted at. */
export const compiledBytesOf = (selections: number): number => COMPILED_BYTES.operation + selections * COMPILED_BYTES.selection

/** What every compiled operation of the server may take in all. */
const COMPILED_BUDGET = 32 * 1024 * 1024

/**
 * graphql-jit's compiled operations, bounded. A compiled function grows
 * with the operation's selections, fragments counted where spread: a 2 KB
 * document of fragments spread to 7,480 selections held the event loop
 * 0.3–0.7 s as it compiled and first ran, and kept some 40 MB that the
 * document cache, counting its text, never saw; a caller sending such
 * documents, each twice, grew the server by 2 GB. So an operation of more
 * than jitMaxSelections stays interpreted (graphql-js ran that one in
 * 2 ms), and the compiled ones take COMPILED_BUDGET at most: past it the
 * least recently run is let go, and runs interpreted from then on.
 *
 * A compiled operation lives no longer than its plan, which the document
 * cache keeps (documents.ts): the budget holds the plans only weakly. Held
 * strongly, a plan kept its whole document alive after the document cache
 * had let it go: 4,000 documents of 27 KB, one compiled operation each
 * (counted 13 KB), grew the server to 2.5 GB, past a 1 GB heap's end.
 */
export class QueryCompiler {
  /** Runs of an operation before it is compiled. */
  readonly after: number
  /** The compiled operations, by plan: gone with their plan. */
  readonly #compiled = new WeakMap<ResolverPlan, CompiledQuery>()
  /** The budget, by plan number, least recently run first: one let go takes its compiled operation with it. */
  readonly #budget: LRUCache<number, WeakRef<ResolverPlan>>
  /** A plan collected leaves the budget. */
  readonly #collected = new FinalizationRegistry<number>((id) => { this.#budget.delete(id) })

  constructor (after: number, bytes = COMPILED_BUDGET) {
    this.after = after
    this.#budget = new LRUCache<number, WeakRef<ResolverPlan>>({
      maxSize: bytes,
      dispose: (plan) => { const gone = plan.deref(); if (gone !== undefined) this.#compiled.delete(gone) }
    })
  }

  /** The plan's compiled operation, when it has one still. */
  get (plan: ResolverPlan): CompiledQuery | undefined {
    this.#budget.get(plan.id)
    return this.#compiled.get(plan)
  }

  /** Compiles the plan's operation and keeps it; undefined when graphql-jit cannot. */
  compile (plan: ResolverPlan, schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined): CompiledQuery | undefined {
    const compiled = compileQuery(schema, document, operationName)
    if (!isCompiledQuery(compiled)) return undefined
    this.#compiled.set(plan, compiled)
    this.#budget.set(plan.id, new WeakRef(plan), { size: compiledBytesOf(plan.selections) })
    this.#collected.register(plan, plan.id)
    return compiled
  }
}

let plans = 0

/**
 * Running with the resolvers: interpreted by graphql-js at first, compiled
 * by graphql-jit once the operation has run `after` times (a compiled
 * function per document and operation, made once: it pays off on the
 * operations clients send again and again), unless it has too many
 * selections or the compiler lets it go (QueryCompiler). An operation
 * graphql-jit cannot compile stays interpreted.
 */
export class ResolverPlan implements Plan {
  /** Tells plans apart in the compiler's budget, which must not hold them. */
  readonly id = ++plans
  /** Of the operation, fragments counted where spread: what its compiled function grows with. */
  readonly selections: number
  readonly #schema: GraphQLSchema
  readonly #document: DocumentNode
  readonly #operationName: string | undefined
  /** Undefined: never compiled. */
  readonly #compiler: QueryCompiler | undefined
  #runs = 0
  #compiledOnce = false

  constructor (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined, selections: number, compiler: QueryCompiler | false) {
    this.selections = selections
    this.#schema = schema
    this.#document = document
    this.#operationName = operationName
    this.#compiler = compiler !== false && selections <= GRAPHQL_LIMITS.jitMaxSelections ? compiler : undefined
  }

  /** The compiled operation, compiled on the run that is due; undefined while (or once again) interpreted. */
  #compiled (): CompiledQuery | undefined {
    const compiler = this.#compiler
    if (compiler === undefined) return undefined
    if (this.#compiledOnce) return compiler.get(this)
    if (this.#runs++ < compiler.after) return undefined
    // Once: a plan the compiler let go is not compiled again.
    this.#compiledOnce = true
    return compiler.compile(this, this.#schema, this.#document, this.#operationName)
  }

  async run (context: GraphQLContext, variables: Record<string, unknown>): Promise<ExecutionResult> {
    const compiled = this.#compiled()
    if (compiled === undefined) {
      return execute({
        schema: this.#schema,
        document: this.#document,
        rootValue: ROOT,
        contextValue: context,
        variableValues: variables,
        operationName: this.#operationName
      })
    }
    return compiled.query(ROOT, context, variables)
  }
}

/**
 * The plan stage: how an operation that passed every check will run. A
 * query of people and friends the database can answer whole runs as one
 * statement per root field that builds its JSON (sql-plan.ts); anything
 * else runs with the resolvers.
 */
export const planOf = (operation: PreparedOperation): Plan => operation.sql ?? operation.resolvers
