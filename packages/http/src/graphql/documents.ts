import { getOperationAST, GraphQLError, Kind, parse, specifiedRules, validate, type DocumentNode, type GraphQLSchema, type ValidationRule } from 'graphql'
import { LRUCache } from 'lru-cache'
import { GraphQLRequestError, requestError } from './error-format.js'
import { fragmentsNotInUse, GRAPHQL_LIMITS, isJsonEncoded, jsonInPlaceOfDocument, repeatedFields, tooLong, tooManySelections } from './limits.js'
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
 *
 * What is remembered is bounded by the heap it takes, not only by count: a
 * syntax tree costs far more than its text, since its locations link every
 * token graphql-js read. A valid document is remembered with its tree; a
 * refused one keeps no tree, only its refusal and the names of its
 * operations.
 */

/** How many documents of one kind are remembered, and the heap they may take in all (as `BYTES` estimates it). */
export interface Remembering { documents: number, bytes: number }

/** Valid and refused documents are remembered apart: refusals never push good documents out. */
export const REMEMBERED: Readonly<Record<'valid' | 'refused', Remembering>> = {
  // About 20 MB whatever callers send: a thousand documents of 80
  // characters, three hundred of 300, three of the longest.
  valid: { documents: 1024, bytes: 20 * 1024 * 1024 },
  refused: { documents: 1024, bytes: 8 * 1024 * 1024 }
}

/**
 * What a remembered document takes, in bytes of heap, from measurement
 * (distinct documents of one shape sent to the app, each run once, then
 * the heap after a full collection). A valid one holds its syntax tree and
 * prepared operations: about 100 bytes a character for a client's usual
 * query, 190 for the densest found (650 `id`s in one selection, which the
 * repeats limit now refuses; 80 for the densest it admits), 60 for
 * one of 215 fragments, 5 to 16 KB for a short one; counted here above
 * each. A refused one holds its text, one byte a character or two when one
 * is past Latin-1 (counted at two); its errors, some 1.4 KB each beside the
 * message (a GraphQLError defines its properties one by one, which makes it
 * a dictionary); some 60 bytes per operation name.
 */
const BYTES = { document: 4096, validCharacter: 192, refusal: 1024, refusedCharacter: 2, error: 1536, operationName: 64 }

const validBytes = (source: string): number => BYTES.document + BYTES.validCharacter * source.length

const refusalBytes = (source: string, { errors }: GraphQLRequestError, operationNames = 0): number =>
  errors.reduce((bytes, { message }) => bytes + BYTES.error + message.length, BYTES.refusal + BYTES.refusedCharacter * source.length + BYTES.operationName * operationNames)

/** Operations prepared per document: a document has a few; made-up names are never remembered. */
const OPERATIONS_PER_DOCUMENT = 16

const refused = (errors: readonly GraphQLError[]): GraphQLRequestError => new GraphQLRequestError(400, errors)

const noSuchOperation = (name: string | undefined): GraphQLRequestError => requestError(400, name === undefined
  ? 'the document has several operations: say which to run with operationName'
  : `the document has no operation named ${JSON.stringify(name)}`, 'GRAPHQL_VALIDATION_FAILED')

/**
 * A refusal to remember: the same messages, locations and extensions, made
 * anew without what graphql-js' errors hold on to. An error keeps the
 * syntax nodes it names, whose locations link every token of the document,
 * and the frames of its stack keep what they ran on (the lexer, the
 * validation context and its tree) until the stack is read: a document of
 * 22 KB that did not parse kept 250 KB that way. No response or log line
 * shows the stack of a refusal, so none is taken.
 */
const rememberedRefusal = (errors: readonly GraphQLError[]): GraphQLRequestError => {
  const stackTraceLimit = Error.stackTraceLimit
  Error.stackTraceLimit = 0
  try {
    return refused(errors.map(({ message, source, positions, path, originalError, extensions }) =>
      new GraphQLError(message, { source, positions, path, originalError, extensions })))
  } finally {
    Error.stackTraceLimit = stackTraceLimit
  }
}

/** A document that parsed and passed validation. */
export class ParsedDocument {
  readonly document: DocumentNode
  readonly #settings: OperationSettings
  readonly #operations = new Map<string, PreparedOperation>()

  constructor (document: DocumentNode, settings: OperationSettings) {
    this.document = document
    this.#settings = settings
  }

  /** The operation a request names (or the only one), prepared once per name; 400 when the name selects nothing. */
  operation (name: string | undefined): PreparedOperation {
    const key = name ?? ''
    let prepared = this.#operations.get(key)
    if (prepared === undefined) {
      const node = getOperationAST(this.document, name)
      if (!node) throw noSuchOperation(name)
      prepared = new PreparedOperation(this.document, node, this.#settings)
      if (this.#operations.size >= OPERATIONS_PER_DOCUMENT) this.#operations.clear()
      this.#operations.set(key, prepared)
    }
    return prepared
  }
}

/**
 * A document that parsed but did not pass validation: its refusal, and
 * what the name check that comes before it needs, the number of its
 * operations and their names (getOperationAST's rule: no name selects the
 * only operation, a name the operation of that name).
 */
export class RefusedDocument {
  /** The heap it takes remembered (BYTES). */
  readonly bytes: number
  readonly #refusal: GraphQLRequestError
  readonly #operations: number
  readonly #names: ReadonlySet<string>

  constructor (source: string, document: DocumentNode, validationErrors: readonly GraphQLError[]) {
    const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION)
    this.#refusal = rememberedRefusal(validationErrors)
    this.#operations = operations.length
    this.#names = new Set(operations.flatMap((operation) => operation.name === undefined ? [] : [operation.name.value]))
    this.bytes = refusalBytes(source, this.#refusal, operations.length)
  }

  /** 400: that the name selects nothing, or else the document's refusal. */
  operation (name: string | undefined): never {
    if (name === undefined ? this.#operations !== 1 : !this.#names.has(name)) throw noSuchOperation(name)
    throw this.#refusal
  }
}

export interface DocumentSettings extends OperationSettings {
  /** Our validation rules, run beside graphql-js' own (limits.ts). */
  validationRules: readonly ValidationRule[]
}

/** Remembered by their text, bounded by count and by the heap they take; the least recently used go first. */
const textCache = <V extends object>({ documents, bytes }: Remembering, bytesOf: (value: V, source: string) => number): LRUCache<string, V> =>
  new LRUCache<string, V>({ max: documents, maxSize: bytes, sizeCalculation: bytesOf })

/** Parsed and validated documents by their text; refused ones too, apart. */
export class DocumentCache {
  readonly #schema: GraphQLSchema
  readonly #rules: readonly ValidationRule[]
  readonly #settings: OperationSettings
  readonly #valid: LRUCache<string, ParsedDocument>
  readonly #refused: LRUCache<string, RefusedDocument | GraphQLRequestError>

  constructor ({ validationRules, ...settings }: DocumentSettings, remembered = REMEMBERED) {
    this.#schema = settings.schema
    this.#rules = [...specifiedRules, ...validationRules]
    this.#settings = settings
    this.#valid = textCache(remembered.valid, (_document, source) => validBytes(source))
    this.#refused = textCache(remembered.refused, (refusal, source) => refusal instanceof RefusedDocument ? refusal.bytes : refusalBytes(source, refusal))
  }

  /**
   * The document of a text; throws the request error (400) of one too long
   * to read, or that does not parse. A document that would take more than
   * the whole budget of its kind is read again each time it comes.
   */
  parse (source: string): ParsedDocument | RefusedDocument {
    const known = this.#valid.get(source) ?? this.#refused.get(source)
    if (known instanceof GraphQLRequestError) throw known
    if (known !== undefined) return known
    // Not remembered: a text that long is never kept.
    const length = tooLong(source)
    if (length !== undefined) throw refused([length])
    const read = this.#read(source)
    if (read instanceof ParsedDocument) this.#valid.set(source, read)
    else this.#refused.set(source, read)
    if (read instanceof GraphQLRequestError) throw read
    return read
  }

  #read (source: string): ParsedDocument | RefusedDocument | GraphQLRequestError {
    let document: DocumentNode
    try {
      document = parse(source, { maxTokens: GRAPHQL_LIMITS.maxTokens })
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error
      return rememberedRefusal([isJsonEncoded(source) ? jsonInPlaceOfDocument() : error])
    }
    for (const limit of [tooManySelections, fragmentsNotInUse, repeatedFields]) {
      const oversized = limit(document)
      if (oversized.length > 0) return new RefusedDocument(source, document, oversized)
    }
    const errors = validate(this.#schema, document, this.#rules)
    return errors.length > 0 ? new RefusedDocument(source, document, errors) : new ParsedDocument(document, this.#settings)
  }
}
