import type { FastifyBaseLogger } from 'fastify'
import { execute, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql'
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit'
import type { GraphQLContext } from './context.js'
import type { PreparedOperation } from './prepared-operation.js'
import type { JsonData } from './sql-plan.js'

/** How a checked operation runs: with its coerced variables, in a request's context. */
export interface Plan {
  /** The result, or the `data` of one without errors as the database wrote it; `log` takes what the result cannot say. */
  run(context: GraphQLContext, variables: Record<string, unknown>, log: FastifyBaseLogger): Promise<ExecutionResult | JsonData>
}

// The resolvers are all on the schema's fields; the root value carries nothing.
const ROOT = Object.freeze({})

/**
 * Running with the resolvers: interpreted by graphql-js at first, compiled
 * by graphql-jit once the operation has run `jitAfter` times (a compiled
 * function per document and operation, made once: it pays off on the
 * operations clients send again and again). An operation graphql-jit cannot
 * compile stays interpreted.
 */
export class ResolverPlan implements Plan {
  readonly #schema: GraphQLSchema
  readonly #document: DocumentNode
  readonly #operationName: string | undefined
  /** Interpreted until then; never compiled: never. */
  readonly #compileAfter: number
  #runs = 0
  #compiled: CompiledQuery | undefined

  constructor (schema: GraphQLSchema, document: DocumentNode, operationName: string | undefined, jitAfter: number | false) {
    this.#schema = schema
    this.#document = document
    this.#operationName = operationName
    this.#compileAfter = jitAfter === false ? Number.POSITIVE_INFINITY : jitAfter
  }

  async run (context: GraphQLContext, variables: Record<string, unknown>): Promise<ExecutionResult> {
    if (this.#compiled === undefined && this.#runs++ === this.#compileAfter) {
      const compiled = compileQuery(this.#schema, this.#document, this.#operationName)
      if (isCompiledQuery(compiled)) this.#compiled = compiled
    }
    if (this.#compiled === undefined) {
      return execute({
        schema: this.#schema,
        document: this.#document,
        rootValue: ROOT,
        contextValue: context,
        variableValues: variables,
        operationName: this.#operationName
      })
    }
    return this.#compiled.query(ROOT, context, variables)
  }
}

/**
 * The plan stage: how an operation that passed every check will run. A
 * query of people and friends the database can answer whole runs as one
 * statement per root field that builds its JSON (sql-plan.ts); anything
 * else runs with the resolvers.
 */
export const planOf = (operation: PreparedOperation): Plan => operation.sql ?? operation.resolvers
