import { isDomainError, type Caller } from '@people-service/domain'
import type { FastifyBaseLogger, FastifyRequest } from 'fastify'
import { GraphQLError, type GraphQLFormattedError } from 'graphql'
import { RateLimitedError } from '../../auth/rate-limits.js'
import type { Access } from '../../plugins/access.js'
import { CLOSE, CONNECTION_INIT, credentialsOf, duplicateId, envelopeOf, forbiddenBecause, readMessage, type ClientMessage, type ClientSignals, type Closing, type SocketCredentials } from './socket-protocol.js'
import { closeSocket, ScreenedSocket, sendTo, type RawSocket } from './screened-socket.js'
import { chargeCost } from '../pipeline.js'
import { takeTurn } from '../../turns.js'
import { checkSubscription, readSubscribePayload, type Check } from './subscribe-checks.js'

/** What every session of one app shares (socket-sessions.ts). */
export interface SessionDeps {
  access: Access
  /** The pipeline's checks, on the subscription door. */
  check: Check
  initTimeoutMs: number
  maxPerCaller: number
  /** Live subscriptions per account (a key's count against its owner's), on this instance. */
  live: Map<string, number>
  /** Shapes an error for the client as the HTTP path would (error-format.ts). */
  format(error: unknown, requestId: string, log: FastifyBaseLogger): GraphQLFormattedError
  opened(session: SocketSession): void
  ended(session: SocketSession): void
}

// Messages of one connection are checked one after the other; a client that
// sends faster than that is closed rather than queued without end.
const MAX_IN_FLIGHT = 32

/*
 * Only a subscribe carries much (a document and its variables, up to the
 * socket's 1 MiB a message), and it is charged before its document is
 * read. Anything else, connection_init included, fits in SMALL_MESSAGE: an
 * unauthenticated client had sent 1 MiB pings without end, every one
 * parsed twice (here and in Mercurius), one connection keeping a core 83%
 * busy and every other request waiting 61 ms.
 * - Before a connection_init arrives, nobody is known: a message over
 *   SMALL_MESSAGE, or more than BEFORE_INIT of them, drops the connection
 *   unread, without the closing handshake, so that what the client sent
 *   after it is not read either (a client sending 1 MiB pings, eight at a
 *   time, kept the server 86% busy when closed, 35% when dropped).
 * - Afterwards, every message is paid for (`#paid`) before it is read, and
 *   a message over SMALL_MESSAGE that is not a subscribe closes the
 *   connection 4400: another costs a new connection and a connection_init.
 */
const SMALL_MESSAGE = 16_384
const BEFORE_INIT = 8

/*
 * Past the budget (`#paid`): the biggest text answered (a document's 32,768
 * characters and its variables), and how many are answered before the
 * connection is dropped.
 */
const READ_REFUSED = 65_536
const REFUSALS = 8

/*
 * Subscription ids are echoed in every message of the subscription: one of
 * a megabyte, sent by a client that read nothing, had grown the server by
 * 120 MB a second. Clients use UUIDs or counters.
 */
const MAX_ID_LENGTH = 128

const isSubscriptionId = (id: string): boolean => id !== '' && id.length <= MAX_ID_LENGTH

const byteLengthOf = (data: unknown): number => {
  if (typeof data === 'string') return Buffer.byteLength(data)
  if (Buffer.isBuffer(data) || data instanceof ArrayBuffer) return data.byteLength
  if (Array.isArray(data)) return (data as Buffer[]).reduce((bytes, chunk) => bytes + chunk.byteLength, 0)
  return 0
}

const textOf = (data: unknown): string => {
  if (typeof data === 'string') return data
  if (Buffer.isBuffer(data)) return data.toString()
  if (Array.isArray(data)) return Buffer.concat(data as Buffer[]).toString()
  if (data instanceof ArrayBuffer) return Buffer.from(data).toString()
  return ''
}

const isUnauthenticated = (error: unknown): boolean => isDomainError(error) && error.code === 'UNAUTHENTICATED'

/** A budget's refusal as the client hears it: RATE_LIMITED, and when to retry. Anything else is thrown on. */
const rateLimited = (error: unknown): GraphQLFormattedError => {
  if (!(error instanceof RateLimitedError)) throw error
  return { message: error.message, extensions: { code: error.code, retryAfter: error.retryAfter } }
}

/**
 * An event the budget cannot pay, as the error that ends its subscription:
 * thrown from the subscription's events, Mercurius sends it as it stands.
 */
const eventRefused = (error: unknown): GraphQLError => {
  const { message, extensions } = rateLimited(error)
  return new GraphQLError(message, { extensions })
}

export type Authenticate = (credentials: SocketCredentials) => Promise<Caller>

/** A live subscription: the account it counts against, and what each of its events is charged. */
interface Live {
  account: string
  /** Requests of the budget: max(1, ceil(cost / 100)), as its subscribe was charged. */
  units: number
}

/** Scopes the caller had and no longer has: what it started may have needed them. */
const lostScopes = (before: Caller, after: Caller): boolean => before.scopes.some((scope) => !after.scopes.includes(scope))

/**
 * One WebSocket connection to /graphql, screened before Mercurius hears it.
 * Mercurius parses a `subscribe` before any hook runs, answers exception
 * text when it fails, has no deadline for `connection_init`, no cap on
 * subscriptions, and trusts a connection's credentials from then on. Here:
 *
 * - `connection_init` within `initTimeoutMs` (else 4408), once (else 4429),
 *   with credentials that authenticate and a budget that pays one request
 *   for it (else 4403; the legacy subprotocol also gets a connection_error);
 * - every message after it is charged one request before it is read (`#paid`);
 * - every subscribe authenticates its connection's credentials anew (4403
 *   when they no longer do), is charged its cost to the caller's budget, counts
 *   against `maxPerCaller`, and passes the pipeline's checks (pipeline.ts), all
 *   before Mercurius parses it; Mercurius gets the checked fields only;
 * - every event is charged to the caller's budget as its subscribe was,
 *   before its selection runs (`admitEvent`); one the budget cannot pay ends
 *   the subscription with RATE_LIMITED;
 * - every error the client gets is shaped as over HTTP (no exception text);
 * - `recheck()` (credential-watch.ts) closes the connection, 4403, once its
 *   credentials stop authenticating.
 */
export class SocketSession {
  readonly screened: ScreenedSocket
  readonly request: FastifyRequest
  /** The caller as last authenticated; undefined before `connection_init`. */
  caller: Caller | undefined
  credentials: SocketCredentials | undefined

  readonly #socket: RawSocket
  readonly #signals: ClientSignals
  readonly #deps: SessionDeps
  /** Live subscriptions by id. */
  readonly #subscriptions = new Map<string, Live>()
  readonly #initTimer: NodeJS.Timeout
  #initialised = false
  /** Messages that arrived before a connection_init did; undefined once one has. */
  #beforeInit: number | undefined = 0
  #closed = false
  /** Messages the budget refused since the last one it paid. */
  #refusals = 0
  #inFlight = 0
  #queue: Promise<void> = Promise.resolve()

  constructor (socket: RawSocket, request: FastifyRequest, signals: ClientSignals, deps: SessionDeps) {
    this.#socket = socket
    this.request = request
    this.#signals = signals
    this.#deps = deps
    this.screened = new ScreenedSocket(socket, (data) => this.#outgoing(data))
    this.#initTimer = setTimeout(() => this.close(CLOSE.initTimeout), deps.initTimeoutMs)
    socket.on('message', (data) => this.#arrived(data))
    socket.on('close', () => this.#ended())
  }

  close ({ code, reason }: Closing): void {
    if (this.#closed) return
    this.#closed = true
    closeSocket(this.#socket, code, reason)
  }

  #drop (): void {
    this.#closed = true
    this.#socket.terminate()
  }

  /**
   * Authenticates the connection's credentials anew (through `authenticate`,
   * which several connections with the same credentials may share). Closes
   * the connection 4403 when they no longer authenticate or lost a scope; a
   * failure to check (the store away) keeps it, asks for another check soon
   * and is thrown. Answers the current caller, or undefined once closed.
   */
  async recheck (authenticate: Authenticate = (credentials) => this.#deps.access.authenticate(credentials)): Promise<Caller | undefined> {
    const { credentials, caller: before } = this
    if (credentials === undefined || this.#closed) return undefined
    let caller: Caller
    try {
      caller = await authenticate(credentials)
    } catch (error) {
      if (!isUnauthenticated(error)) throw error
      this.close(CLOSE.forbidden)
      return undefined
    }
    // The same caller (the credential cache's entry): nothing changed, and
    // nothing to do, which most checks find every second.
    if (caller === before) return caller
    if (before !== undefined && lostScopes(before, caller)) {
      this.close(CLOSE.forbidden)
      return undefined
    }
    this.#authenticated(credentials, caller)
    return caller
  }

  #authenticated (credentials: SocketCredentials, caller: Caller): void {
    this.credentials = credentials
    this.caller = caller
  }

  #arrived (data: unknown): void {
    if (this.#closed) return
    if (this.#beforeInit === undefined) return this.#enqueue(textOf(data))
    if (byteLengthOf(data) > SMALL_MESSAGE || ++this.#beforeInit > BEFORE_INIT) return this.#drop()
    const text = textOf(data)
    if (readMessage(text)?.type === CONNECTION_INIT) this.#beforeInit = undefined
    this.#enqueue(text)
  }

  #enqueue (text: string): void {
    if (this.#closed) return
    if (this.#inFlight >= MAX_IN_FLIGHT) return this.close(CLOSE.tooManyInFlight)
    this.#inFlight++
    this.#queue = this.#queue
      .then(() => this.#screen(text))
      .catch((error: unknown) => {
        this.request.log.error({ err: error }, 'a WebSocket message could not be handled')
        this.close(CLOSE.internalError)
      })
      .finally(() => { this.#inFlight-- })
  }

  async #screen (text: string): Promise<void> {
    if (this.#closed) return
    if (this.caller !== undefined && !(await this.#paid(this.caller, text))) return
    if (this.#closed) return
    const message = readMessage(text)
    if (message === undefined) return this.close(CLOSE.invalidMessage)
    if (text.length > SMALL_MESSAGE && message.type !== this.#signals.subscribe) return this.close(CLOSE.invalidMessage)
    switch (message.type) {
      case CONNECTION_INIT: return this.#initialise(message, text)
      case this.#signals.subscribe: return this.#subscribe(message)
      case this.#signals.stop:
        if (typeof message.id === 'string') this.#release(message.id)
        return this.screened.deliver(text)
      default:
        if (!this.#signals.others.includes(message.type)) return this.close(CLOSE.invalidMessage)
        return this.screened.deliver(text)
    }
  }

  async #initialise (message: ClientMessage, text: string): Promise<void> {
    if (this.#initialised) return this.close(CLOSE.tooManyInits)
    this.#initialised = true
    clearTimeout(this.#initTimer)
    const credentials = credentialsOf(message.payload)
    let caller: Caller | undefined
    try {
      if (credentials !== undefined) caller = await this.#deps.access.authenticate(credentials)
    } catch (error) {
      if (!isUnauthenticated(error)) throw error
    }
    if (this.#closed) return
    if (credentials === undefined || caller === undefined) return this.#refuse({ message: 'Forbidden' })
    // Opening a connection is a request like any other: one from the budget
    // (and in a key's usage), else one key could hold any number of
    // authenticated connections for nothing.
    try {
      await this.#deps.access.charge(this.request, caller)
    } catch (error) {
      return this.#refuse(rateLimited(error))
    }
    if (this.#closed) return
    this.#authenticated(credentials, caller)
    this.#deps.opened(this)
    this.screened.deliver(text)
  }

  /**
   * Charges a message after connection_init one request, before it is read:
   * pings, pongs and completes cost a parse and an answer each, and four
   * connections of one account sending them without end had kept a core
   * busy for the price of four requests. True: read it.
   *
   * When the budget cannot pay, the message is not parsed (a refused
   * megabyte of `{}` had cost 40 ms each) but answered by its envelope
   * alone (`type` and `id`): a subscribe gets its RATE_LIMITED error, a
   * `complete` of a live subscription still ends it, anything else goes
   * unanswered. Answering costs a scan of the text, so only a text of at
   * most READ_REFUSED is answered, and only REFUSALS of them until a
   * message is paid again: past either the connection is dropped unread,
   * as a client that went on sending refused megabytes had kept the server
   * busy for nothing.
   */
  async #paid (caller: Caller, text: string): Promise<boolean> {
    try {
      await this.#deps.access.charge(this.request, caller)
      this.#refusals = 0
      return true
    } catch (error) {
      const forBudget = error instanceof RateLimitedError
      if (forBudget && (text.length > READ_REFUSED || ++this.#refusals > REFUSALS)) {
        this.#drop()
        return false
      }
      const { type, id } = envelopeOf(text)
      const known = id !== undefined && isSubscriptionId(id)
      if (known && type === this.#signals.subscribe && !this.#subscriptions.has(id)) {
        // Why, as over HTTP: the budget, or a store that could not count it.
        this.#sendErrors(id, [forBudget ? rateLimited(error) : this.#format(error)])
      } else if (known && type === this.#signals.stop && this.#release(id)) {
        this.screened.deliver(JSON.stringify({ type, id }))
      } else if (!forBudget) {
        throw error
      }
      return false
    }
  }

  /**
   * Refuses the connection at `connection_init`: no `connection_ack`, and
   * 4403. Only the legacy subprotocol has a message for the reason; over
   * graphql-transport-ws a message it does not define would make its
   * clients report an invalid message instead of Forbidden.
   */
  #refuse (payload: GraphQLFormattedError): void {
    this.request.log.debug({ code: payload.extensions?.code }, 'GraphQL subscription connection refused')
    if (this.#signals.refusal === undefined) return this.close(forbiddenBecause(payload.message))
    this.#send({ type: this.#signals.refusal, payload })
    this.close(CLOSE.forbidden)
  }

  async #subscribe (message: ClientMessage): Promise<void> {
    if (this.credentials === undefined) return this.close(CLOSE.unauthorized)
    const { id } = message
    if (typeof id !== 'string' || !isSubscriptionId(id)) return this.close(CLOSE.invalidMessage)
    if (this.#subscriptions.has(id)) return this.close(duplicateId(id))
    let refusal: GraphQLFormattedError[]
    try {
      const caller = await this.recheck()
      if (caller === undefined) return
      refusal = await this.#admit(id, caller, message)
    } catch (error) {
      refusal = [this.#format(error)]
    }
    if (refusal.length > 0) this.#sendErrors(id, refusal)
  }

  /**
   * Counts and checks a subscription, and hands it to Mercurius; answers the
   * refusal otherwise. Its first request was charged before it was read
   * (`#paid`), the rest of its cost is once it passed the checks (the
   * pipeline's charge stage).
   */
  async #admit (id: string, caller: Caller, message: ClientMessage): Promise<GraphQLFormattedError[]> {
    const account = caller.accountId
    const full = this.#tooMany(account)
    if (full !== undefined) return [full]
    const request = readSubscribePayload(message.payload)
    if (request instanceof GraphQLError) return [this.#format(request)]
    const checked = checkSubscription(request, caller, this.#deps.check)
    if (!('operation' in checked)) return checked.map((error) => this.#format(error))
    let units: number
    try {
      units = (await chargeCost(checked, (more) => this.#deps.access.limits.charge(this.request, undefined, caller, more))).charged
    } catch (error) {
      return [rateLimited(error)]
    }
    // Closed while waiting on the budget: #ended has released its places already.
    if (this.#closed) return []
    // Another connection of the account may have taken the last place meanwhile.
    const taken = this.#tooMany(account)
    if (taken !== undefined) return [taken]
    this.#subscriptions.set(id, { account, units })
    this.#deps.live.set(account, (this.#deps.live.get(account) ?? 0) + 1)
    // Only what was checked reaches Mercurius: no `extensions` (Mercurius
    // would authenticate a connection-init payload found there).
    this.screened.deliver(JSON.stringify({ type: message.type, id, payload: request }))
    return []
  }

  /**
   * Charges one event of subscription `id` to the caller's budget, before its
   * selection runs (resolvers.ts): as many requests as its subscribe was
   * charged, through the same counters as every request. True: run it.
   * False: the subscription is no longer live (completed, its connection
   * closed), and the event is dropped. When the budget cannot pay, nothing
   * is charged and RATE_LIMITED (with `retryAfter`) is thrown: Mercurius
   * ends the subscription with that error, and other subscriptions go on.
   * In process the charge settles at once, in the turn the fan-out gave this
   * subscriber; shared counters (Redis) answer later, many subscribers'
   * answers in one turn, so each selection then waits for a turn of its own.
   */
  admitEvent (id: string): boolean | Promise<boolean> {
    const live = this.#subscriptions.get(id)
    const { caller } = this
    if (live === undefined || caller === undefined || this.#closed) return false
    let charged: void | Promise<void>
    try {
      charged = this.#deps.access.limits.charge(this.request, undefined, caller, live.units)
    } catch (error) {
      throw eventRefused(error)
    }
    if (charged === undefined) return true
    return charged.then(takeTurn, (error: unknown) => { throw eventRefused(error) })
      .then(() => this.#subscriptions.get(id) === live)
  }

  /** The refusal of one more subscription for an account at its cap on this instance. */
  #tooMany (account: string): GraphQLFormattedError | undefined {
    const live = this.#deps.live.get(account) ?? 0
    if (live < this.#deps.maxPerCaller) return undefined
    return {
      message: `this caller already has ${live} live subscriptions on this instance; at most ${this.#deps.maxPerCaller} are allowed`,
      extensions: { code: 'TOO_MANY_SUBSCRIPTIONS', max: this.#deps.maxPerCaller }
    }
  }

  /** Frees the place of subscription `id`; false when it was not live. */
  #release (id: string): boolean {
    const account = this.#subscriptions.get(id)?.account
    if (account === undefined) return false
    this.#subscriptions.delete(id)
    const live = (this.#deps.live.get(account) ?? 1) - 1
    if (live > 0) this.#deps.live.set(account, live)
    else this.#deps.live.delete(account)
    return true
  }

  /**
   * What Mercurius sends: a subscription it completes or fails is no longer
   * live, and an error without a code is an exception's text (a failure in
   * a resolver, say): logged, and replaced by the request-id message.
   */
  #outgoing (data: string): string {
    const ending = data.startsWith('{"type":"complete"') || data.startsWith('{"type":"error"')
    if (!ending) return data
    const message = JSON.parse(data) as { type: string, id?: string, payload?: unknown }
    const released = typeof message.id === 'string' && this.#release(message.id)
    if (message.type !== 'error' || !Array.isArray(message.payload)) return data
    // An error ends the subscription for the client (an event the budget
    // refused, a failure inside Mercurius), but Mercurius keeps its listener
    // on the bus until the connection closes: stopped as the client's
    // `complete` would stop it.
    if (released) this.screened.deliver(JSON.stringify({ type: this.#signals.stop, id: message.id }))
    const safe = (message.payload as GraphQLFormattedError[]).map((error) =>
      typeof error.extensions?.code === 'string' ? error : this.#format(new Error(error.message)))
    return JSON.stringify({ ...message, payload: safe })
  }

  #format (error: unknown): GraphQLFormattedError {
    return this.#deps.format(error, this.request.id, this.request.log)
  }

  #sendErrors (id: string | undefined, errors: GraphQLFormattedError[]): void {
    this.#send({ type: 'error', ...(id === undefined ? {} : { id }), payload: errors })
  }

  #send (message: Record<string, unknown>): void {
    if (!this.#closed) sendTo(this.#socket, JSON.stringify(message))
  }

  #ended (): void {
    this.#closed = true
    clearTimeout(this.#initTimer)
    for (const id of [...this.#subscriptions.keys()]) this.#release(id)
    this.#deps.ended(this)
  }
}
