import type { Caller, KeyRevocations } from '@people-service/domain'
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import type { GraphQLFormattedError } from 'graphql'
import type { Access } from '../../plugins/access.js'
import { watchCredentials } from './credential-watch.js'
import { refuseSubprotocol, type RawSocket } from './screened-socket.js'
import { signalsOf } from './socket-protocol.js'
import { SocketSession } from './socket-session.js'
import type { Check } from './subscribe-checks.js'

/** How WebSocket connections to /graphql are held to account (buildApp's `subscriptions`). */
export interface SubscriptionSettings {
  /** A connection that sends no `connection_init` within this is closed 4408. */
  initTimeoutMs: number
  /** Live subscriptions per caller on this instance (GRAPHQL_MAX_SUBSCRIPTIONS). */
  maxPerCaller: number
  /** How often open connections are checked for revoked or expired credentials. */
  credentialCheckMs: number
}

export const SUBSCRIPTION_DEFAULTS: SubscriptionSettings = {
  initTimeoutMs: 10_000,
  maxPerCaller: 20,
  // Revocations close connections within 5 s: a check per second leaves
  // room for the checks themselves.
  credentialCheckMs: 1000
}

export interface SocketSessionsOptions {
  access: Access
  revocations: KeyRevocations
  check: Check
  settings: SubscriptionSettings
  format(error: unknown, requestId: string, log: FastifyBaseLogger): GraphQLFormattedError
}

type WsHandler = (socket: RawSocket, request: FastifyRequest) => unknown

/**
 * Every WebSocket connection to /graphql gets a SocketSession between the
 * socket and Mercurius. Installed with an onRoute hook on the scope Mercurius
 * registers in, before it does: the hook wraps the WebSocket handler of the
 * route, and @fastify/websocket then serves the wrapped one.
 */
export const installSocketSessions = (scope: FastifyInstance, options: SocketSessionsOptions) => {
  const sessions = new Set<SocketSession>()
  const byRequest = new WeakMap<FastifyRequest, SocketSession>()
  const deps = {
    access: options.access,
    check: options.check,
    initTimeoutMs: options.settings.initTimeoutMs,
    maxPerCaller: options.settings.maxPerCaller,
    live: new Map<string, number>(),
    format: options.format,
    opened: (session: SocketSession) => { sessions.add(session) },
    ended: (session: SocketSession) => { sessions.delete(session) }
  }

  scope.addHook('onRoute', (route: RouteOptions & { wsHandler?: WsHandler }) => {
    const handler = route.wsHandler
    if (handler === undefined) return
    route.wsHandler = (socket, request) => {
      const signals = signalsOf(socket.protocol)
      if (signals === undefined) return refuseSubprotocol(socket)
      const session = new SocketSession(socket, request, signals, deps)
      byRequest.set(request, session)
      return handler(session.screened, request)
    }
  })

  const watch = watchCredentials({
    sessions,
    revocations: options.revocations,
    authenticate: (credentials, version) => options.access.authenticate(credentials, version),
    intervalMs: options.settings.credentialCheckMs,
    log: scope.log
  })
  scope.addHook('onClose', async () => { watch.stop() })

  return {
    /**
     * The caller of a connection as last authenticated (at `connection_init`,
     * then at each subscribe): what its subscriptions run as.
     */
    callerOf (request: FastifyRequest): Caller {
      const caller = byRequest.get(request)?.caller
      if (caller === undefined) throw new Error('a WebSocket connection reached Mercurius unauthenticated')
      return caller
    },
    /** Charges an event of subscription `id` of a connection, before its selection runs (SocketSession.admitEvent). */
    admitEvent (request: FastifyRequest, id: string): boolean | Promise<boolean> {
      return byRequest.get(request)?.admitEvent(id) ?? false
    }
  }
}
