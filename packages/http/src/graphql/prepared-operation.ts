import type { Caller } from '@people-service/domain'
import { getVariableValues, GraphQLError, type DocumentNode, type GraphQLSchema, type OperationDefinitionNode, type OperationTypeNode } from 'graphql'
import { argumentChecks } from './argument-limits.js'
import { fragmentsOf, operationAuthorization } from './authorization.js'
import { costTooHighError, operationWeight, responseTooLargeError, type OperationWeight } from './cost.js'
import { GraphQLRequestError } from './error-format.js'
import { selectionsOf } from './limits.js'
import { type QueryCompiler, ResolverPlan } from './plan.js'
import { SqlPlan } from './sql-plan.js'

export interface OperationSettings {
  /** The executable schema (resolvers attached). */
  schema: GraphQLSchema
  /** Worst-case cost budget of one operation (cost.ts). */
  maxCost: number
  /** The largest response an operation may build, at worst (MAX_RESPONSE_BYTES). */
  maxResponseBytes: number
  /** Compiles operations with graphql-jit (plan.ts); false: never. */
  jit: QueryCompiler | false
  /** Compile the queries the database can answer whole into one statement per root field (sql-plan.ts). */
  sqlPlan: boolean
}

type Variables = Record<string, unknown>

const NO_VARIABLES: Variables = Object.freeze({})

/** Refusals of a request that cannot run at all: 400, every error listed. */
const badRequest = (error: unknown): never => {
  if (error instanceof GraphQLError) throw new GraphQLRequestError(400, [error])
  throw error
}

/**
 * One operation of a parsed document, with what depends on the document
 * alone worked out once (documents.ts keeps one per document and operation
 * name): its literal arguments checked against their limits, the variables
 * its cost and its @skip/@include depend on, the fields it selects, the
 * refusals per set of scopes, its graphql-jit compilation. A request then
 * pays only for what its variables decide.
 */
export class PreparedOperation {
  readonly kind: OperationTypeNode
  readonly name: string | undefined
  readonly document: DocumentNode
  readonly #schema: GraphQLSchema
  readonly #node: OperationDefinitionNode
  readonly #maxCost: number
  readonly #maxResponseBytes: number
  readonly #jit: QueryCompiler | false
  /** The refusal of an argument written in the document: the operation can never run. */
  readonly #literalRefusal: GraphQLRequestError | undefined
  readonly #checkArguments: (variables: Variables) => void
  readonly #weight: (variables: Variables) => OperationWeight
  readonly #authorization: (caller: Caller, variables: Variables) => readonly GraphQLError[]
  #resolvers: ResolverPlan | undefined
  /** The database's plan, when the operation is one it can answer whole. */
  readonly sql: SqlPlan | undefined

  constructor (document: DocumentNode, node: OperationDefinitionNode, { schema, maxCost, maxResponseBytes, jit, sqlPlan }: OperationSettings) {
    this.kind = node.operation
    this.name = node.name?.value
    this.document = document
    this.#schema = schema
    this.#node = node
    this.#maxCost = maxCost
    this.#maxResponseBytes = maxResponseBytes
    this.#jit = jit
    const fragments = fragmentsOf(document.definitions)
    let checkArguments: (variables: Variables) => void = () => {}
    let literalRefusal: GraphQLRequestError | undefined
    try {
      checkArguments = argumentChecks(schema, node, fragments)
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error
      literalRefusal = new GraphQLRequestError(400, [error])
    }
    this.#checkArguments = checkArguments
    this.#literalRefusal = literalRefusal
    this.#weight = operationWeight(schema, document, node)
    this.#authorization = operationAuthorization(schema, node, fragments)
    this.sql = sqlPlan ? SqlPlan.of(schema, node, fragments, () => this.resolvers) : undefined
  }

  /** The request's variables coerced to their types, once; 400 with every variable that does not coerce. */
  coerce (raw: Variables | undefined): Variables {
    const definitions = this.#node.variableDefinitions ?? []
    if (definitions.length === 0) return NO_VARIABLES
    const { coerced, errors } = getVariableValues(this.#schema, definitions, raw ?? {})
    if (errors !== undefined) throw new GraphQLRequestError(400, errors)
    return coerced
  }

  /**
   * The limits of arguments, of cost and of the response's size, with the
   * coerced variables: 400 naming what is out of bounds. Answers the
   * operation's worst-case cost.
   */
  limits (variables: Variables): number {
    if (this.#literalRefusal !== undefined) throw this.#literalRefusal
    let weight: OperationWeight = { cost: 0, bytes: 0 }
    try {
      this.#checkArguments(variables)
      weight = this.#weight(variables)
    } catch (error) {
      badRequest(error)
    }
    if (weight.cost > this.#maxCost) throw new GraphQLRequestError(400, [costTooHighError(weight.cost, this.#maxCost)])
    if (weight.bytes > this.#maxResponseBytes) throw new GraphQLRequestError(400, [responseTooLargeError(weight.bytes, this.#maxResponseBytes)])
    return weight.cost
  }

  /**
   * Every field the operation runs against the policy table, for this
   * caller: 403 with one error per refused field.
   */
  authorize (caller: Caller, variables: Variables): void {
    const denied = this.#authorization(caller, variables)
    if (denied.length > 0) throw new GraphQLRequestError(403, denied)
  }

  /** How the operation runs with the resolvers (plan.ts), made on its first run. */
  get resolvers (): ResolverPlan {
    this.#resolvers ??= new ResolverPlan(this.#schema, this.document, this.name, selectionsOf(this.document, this.#node), this.#jit)
    return this.#resolvers
  }
}
