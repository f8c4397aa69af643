import { overJsonLimits, topLevelStrings } from '../../json-depth.js'

/*
 * What the two WebSocket subprotocols Mercurius serves say, as far as the
 * screening of a connection needs it (see socket-session.ts).
 */

/** Close codes of graphql-transport-ws, used for both subprotocols. */
export const CLOSE = {
  invalidMessage: { code: 4400, reason: 'Invalid message received' },
  unauthorized: { code: 4401, reason: 'Unauthorized' },
  forbidden: { code: 4403, reason: 'Forbidden' },
  initTimeout: { code: 4408, reason: 'Connection initialisation timeout' },
  tooManyInits: { code: 4429, reason: 'Too many initialisation requests' },
  internalError: { code: 1011, reason: 'Internal error' },
  // Not in the protocol: a client sending faster than its messages are checked.
  tooManyInFlight: { code: 1008, reason: 'Too many messages in flight' }
} as const

export type Closing = typeof CLOSE[keyof typeof CLOSE] | { code: 4403 | 4409, reason: string }

/** A close reason may be 123 bytes: a longer one makes `ws` throw instead of closing. */
const MAX_REASON_BYTES = 123

/** 4403, its reason saying why where it fits (a spent budget), else the protocol's `Forbidden`. */
export const forbiddenBecause = (why: string): Closing =>
  Buffer.byteLength(why) <= MAX_REASON_BYTES ? { code: 4403, reason: why } : CLOSE.forbidden

export const duplicateId = (id: string): Closing => {
  const reason = `Subscriber for ${id} already exists`
  return { code: 4409, reason: Buffer.byteLength(reason) <= MAX_REASON_BYTES ? reason : 'Subscriber already exists' }
}

/** The client's message types of one subprotocol. */
export interface ClientSignals {
  subscribe: string
  stop: string
  /** Passed on untouched. */
  others: readonly string[]
  /**
   * The server's message that refuses a connection_init, where the
   * subprotocol defines one (the legacy graphql-ws: connection_error);
   * graphql-transport-ws has none: the close code alone says it.
   */
  refusal?: string
}

const SIGNALS: Record<string, ClientSignals> = {
  'graphql-transport-ws': { subscribe: 'subscribe', stop: 'complete', others: ['ping', 'pong'] },
  'graphql-ws': { subscribe: 'start', stop: 'stop', others: ['connection_terminate'], refusal: 'connection_error' }
}

/** The client's signals of a subprotocol; undefined for one Mercurius refuses. */
export const signalsOf = (protocol: string): ClientSignals | undefined =>
  Object.hasOwn(SIGNALS, protocol) ? SIGNALS[protocol] : undefined

export const CONNECTION_INIT = 'connection_init'

/** A client message as far as its envelope goes. */
export interface ClientMessage { type: string, id?: unknown, payload?: unknown }

/** The message, or undefined when it is not a JSON object with a string `type`. */
export const readMessage = (text: string): ClientMessage | undefined => {
  // A message nested past any the protocol has, or holding more values than
  // any has, is not parsed: a megabyte of `[[[…` in a subscribe's variables
  // took 62 ms, charged nothing once the caller's budget was spent.
  if (overJsonLimits(text) !== undefined) return undefined
  let message: unknown
  try {
    message = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined
  return 'type' in message && typeof message.type === 'string' ? message as ClientMessage : undefined
}

/**
 * A message's `type` and `id`, as far as they are strings, read without
 * parsing the rest (json-depth.ts): how a message the budget cannot pay is
 * answered without being read.
 */
export const envelopeOf = (text: string): { type?: string, id?: string } => topLevelStrings(text, ['type', 'id'])

/** A connection-init payload field, by name, whatever its case (clients copy header spellings). */
const fieldOf = (payload: unknown, name: string): unknown => {
  if (typeof payload !== 'object' || payload === null) return undefined
  const key = Object.keys(payload).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : (payload as Record<string, unknown>)[key]
}

export interface SocketCredentials { authorization?: string, apiKey?: string }

/**
 * The credentials of a connection-init payload, `{ "authorization": "Bearer …" }`
 * or `{ "x-api-key": "…" }`, as the HTTP headers would carry them; undefined
 * when a field is there but is not a string.
 */
export const credentialsOf = (payload: unknown): SocketCredentials | undefined => {
  const authorization = fieldOf(payload, 'authorization')
  const apiKey = fieldOf(payload, 'x-api-key')
  if ((authorization !== undefined && typeof authorization !== 'string') || (apiKey !== undefined && typeof apiKey !== 'string')) return undefined
  return { ...(authorization === undefined ? {} : { authorization }), ...(apiKey === undefined ? {} : { apiKey }) }
}
