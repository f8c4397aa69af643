import type { Person, UseCases } from '@people-service/domain'
import DataLoader from 'dataloader'
import type { MercuriusContext } from 'mercurius'
import type { Caller } from '../types.js'
import { CHUNK_ROWS, inChunks } from './turns.js'

/** What every resolver and loader of one request (or one subscription) can reach. */
export interface GraphQLContext extends MercuriusContext {
  useCases: UseCases
  /**
   * The verified caller: set by the access hook (HTTP) or from the
   * connection-init payload (subscriptions). Undefined only in the context
   * Mercurius builds for a request refused before execution (its error
   * path); nothing executes without a caller, since every field is
   * authorized before execution (authorization.ts).
   */
  caller: Caller | undefined
  requestId: string
  /** The operation the client named, if any: the limits need it before execution. */
  operationName: string | undefined
  /** The worst-case cost budget of one operation (cost.ts). */
  maxCost: number
  /**
   * Whole people by id, loaded in one batch per tick. Lists of friends carry
   * only id and name; a query asking for their age or address fills the rest
   * from here, one statement for the whole level rather than one per person.
   */
  people: DataLoader<string, Person | null>
}

export type ContextFields = Omit<GraphQLContext, keyof MercuriusContext>

export interface ContextInput {
  useCases: UseCases
  caller: Caller | undefined
  requestId: string
  operationName: string | undefined
  maxCost: number
}

/**
 * The fields of one context. A subscription's context is made when its
 * connection initialises, with the caller its session authenticated from
 * the connection-init payload, renewed at each subscribe
 * (subscriptions/socket-session.ts).
 */
export const createContextFields = (input: ContextInput): ContextFields => ({
  ...input,
  // No cache: a subscription's context lives as long as its connection, and
  // a person read there must not be served stale to a later event.
  people: new DataLoader(async (ids) => {
    // Without a cache the same person comes once per field that asked (age, address …): once is enough.
    const found = await inChunks([...new Set(ids)], CHUNK_ROWS, (chunk) => input.useCases.getPeopleByIds(chunk))
    return ids.map((id) => found.get(id) ?? null)
  }, { cache: false })
})
