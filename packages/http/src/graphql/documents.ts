import { getOperationAST, GraphQLError, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql'
import QuickLRU from 'quick-lru'
import { GraphQLRequestError, requestError } from './error-format.js'
import { GRAPHQL_LIMITS, isJsonEncoded, jsonInPlaceOfDocument, tooLong } from './limits.js'
import { PreparedOperation, type OperationSettings } from './prepared-operation.js'

/*
 * The parse stage. Clients send the same few documents again and again, so
 * a document text is read once — its length, its parse (token cap
 * included), graphql-js' validation rules and ours (depth, aliases,
 * directives, introspection in production) — and the result, or the
 * refusal, is remembered by the text itself: another text is another
 * document. Each operation of a document is prepared on first use, by name
 * (prepared-operation.ts); the name is checked first, so a request that
 * names no operation of the document hears that, whether or not the
 * document is valid.
 */

/** Document texts remembered, and as many refused ones: refusals never push good documents out. */
const REMEMBERED = 1024
/** Operations prepared per document: a document has a few; made-up names are never remembered. */
const OPERATIONS_PER_DOCUMENT = 16

const refused = (errors: readonly GraphQLError[]): GraphQLRequestError => new GraphQLRequestError(400, errors)

/** A document that parsed, and what its validation found. */
export class ParsedDocument {
  readonly document: DocumentNode
  /** The refusal of a document that did not pass validation: none of its operations runs. */
  readonly invalid: GraphQLRequestError | undefined
  readonly #settings: OperationSettings
  readonly #operations = new Map<string, PreparedOperation>()

  constructor (document: DocumentNode, validationErrors: readonly GraphQLError[], settings: OperationSettings) {
    this.document = document
    this.invalid = validationErrors.length > 0 ? refused(validationErrors) : undefined
    this.#settings = settings
  }

  /**
   * The operation a request names (or the only one), prepared once per
   * name; 400 when the name selects nothing, or the document is invalid.
   */
  operation (name: string | undefined): PreparedOperation {
    const key = name ?? ''
    let prepared = this.#operations.get(key)
    if (prepared === undefined) {
      const node = getOperationAST(this.document, name)
      if (!node) {
        throw requestError(400, name === undefined
          ? 'the document has several operations: say which to run with operationName'
          : `the document has no operation named ${JSON.stringify(name)}`, 'GRAPHQL_VALIDATION_FAILED')
      }
      if (this.invalid !== undefined) throw this.invalid
      prepared = new PreparedOperation(this.document, node, this.#settings)
      if (this.#operations.size >= OPERATIONS_PER_DOCUMENT) this.#operations.clear()
      this.#operations.set(key, prepared)
    }
    return prepared
  }
}

export interface DocumentSettings extends OperationSettings {
  /** Our validation rules, run beside graphql-js' own (limits.ts). */
  validationRules: readonly ValidationRule[]
}

/** Parsed and validated documents by their text; refused ones too, apart. */
export class DocumentCache {
  readonly #schema: GraphQLSchema
  readonly #rules: readonly ValidationRule[]
  readonly #settings: OperationSettings
  readonly #valid = new QuickLRU<string, ParsedDocument>({ maxSize: REMEMBERED })
  readonly #refused = new QuickLRU<string, ParsedDocument | GraphQLRequestError>({ maxSize: REMEMBERED })

  constructor ({ validationRules, ...settings }: DocumentSettings) {
    this.#schema = settings.schema
    this.#rules = [...specifiedRules, ...validationRules]
    this.#settings = settings
  }

  /** The document of a text; throws the request error (400) of one too long to read, or that does not parse. */
  parse (source: string): ParsedDocument {
    const known = this.#valid.get(source) ?? this.#refused.get(source)
    if (known instanceof GraphQLRequestError) throw known
    if (known !== undefined) return known
    // Not remembered: a text that long is never kept.
    const length = tooLong(source)
    if (length !== undefined) throw refused([length])
    const read = this.#read(source)
    if (read instanceof ParsedDocument && read.invalid === undefined) this.#valid.set(source, read)
    else this.#refused.set(source, read)
    if (read instanceof GraphQLRequestError) throw read
    return read
  }

  #read (source: string): ParsedDocument | GraphQLRequestError {
    let document: DocumentNode
    try {
      document = parse(source, { maxTokens: GRAPHQL_LIMITS.maxTokens })
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error
      return refused([isJsonEncoded(source) ? jsonInPlaceOfDocument() : error])
    }
    return new ParsedDocument(document, validate(this.#schema, document, this.#rules), this.#settings)
  }
}
