import type { Caller, UseCases } from '@people-service/domain'
import { ResponseBudget } from '../response-size.js'
import { Loaders } from './loaders.js'

/** What every resolver of one request (or one subscription's connection) can reach. */
export interface GraphQLContext {
  useCases: UseCases
  /**
   * The verified caller: set by the access hook (HTTP) or by the
   * connection's session (subscriptions), and authorized for every field of
   * the operation before it runs (pipeline.ts).
   */
  caller: Caller
  requestId: string
  /** Batch loads by id and list limit (loaders.ts). */
  loaders: Loaders
  /** What the answer may still take while it is built (MAX_RESPONSE_BYTES). */
  response: ResponseBudget
}

/** A subscription's context: its connection's, and the charge of each of its events. */
export interface SubscriptionContext extends GraphQLContext {
  /**
   * Charges one event to the subscriber's budget before its selection runs
   * (subscriptions/socket-session.ts): true to run it, false when the
   * subscription ended meanwhile; throws RATE_LIMITED when the budget cannot
   * pay, which ends the subscription with that error.
   */
  admitEvent(): boolean | Promise<boolean>
}

export interface ContextInput {
  useCases: UseCases
  caller: Caller
  requestId: string
  /** The largest answer of one request; a subscription's context, which lives as long as its connection, has none (each event is one message). */
  maxResponseBytes?: number
}

/**
 * The context of one request over HTTP, or of one WebSocket connection: a
 * subscription's runs as the caller its session authenticated, renewed at
 * each subscribe (subscriptions/socket-session.ts).
 */
export const createContext = ({ useCases, caller, requestId, maxResponseBytes = Number.POSITIVE_INFINITY }: ContextInput): GraphQLContext =>
  ({ useCases, caller, requestId, loaders: new Loaders(useCases), response: new ResponseBudget(maxResponseBytes) })
