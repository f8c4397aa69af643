import type { Caller, KeyRevocations } from '@people-service/domain'
import type { FastifyBaseLogger } from 'fastify'
import type { SocketCredentials } from './socket-protocol.js'
import type { SocketSession } from './socket-session.js'

export interface CredentialWatchOptions {
  sessions: ReadonlySet<SocketSession>
  /** Changes whenever any credential is revoked, on any instance (Redis when configured). */
  revocations: KeyRevocations
  authenticate(credentials: SocketCredentials): Promise<Caller>
  intervalMs: number
  log: FastifyBaseLogger
}

// A connection's credentials are one object for its life: their key is made once.
const keys = new WeakMap<SocketCredentials, string>()
const keyOf = (credentials: SocketCredentials): string => {
  let key = keys.get(credentials)
  if (key === undefined) {
    key = JSON.stringify([credentials.authorization, credentials.apiKey])
    keys.set(credentials, key)
  }
  return key
}

/**
 * Closes connections whose credentials stopped authenticating: every
 * `intervalMs`, the open connections are checked anew when the shared
 * revocation version changed (a key deleted, an account disabled, deleted,
 * or its password or role changed, on any instance) or could not be read,
 * and a token's connection when its token expires. Otherwise a tick costs
 * one read of the version, and nothing without connections. Connections
 * that share credentials share one authentication per tick.
 *
 * A version held in this process (no Redis) changes with this instance's
 * revocations only; another instance on the same database revokes
 * unheard. Then every connection is checked on every tick, as a request
 * would be: from the credential cache, which reads the database once its
 * entry is API_KEY_CACHE_TTL_MS old, so a revocation anywhere closes the
 * connection within that and a tick. Without this, such a connection
 * outlived its revocation: a key's for good, a token's until it expired.
 */
export const watchCredentials = ({ sessions, revocations, authenticate, intervalMs, log }: CredentialWatchOptions): { stop(): void } => {
  let known: string | undefined
  let running = false

  const tick = async (): Promise<void> => {
    if (running || sessions.size === 0) return
    running = true
    try {
      let version: string | undefined
      try {
        version = await revocations.version()
      } catch {
        version = undefined
      }
      const everyone = !revocations.shared || version === undefined || version !== known
      known = version
      const now = Date.now()
      const once = new Map<string, Promise<Caller>>()
      const shared = (credentials: SocketCredentials): Promise<Caller> => {
        const key = keyOf(credentials)
        let caller = once.get(key)
        if (caller === undefined) {
          caller = authenticate(credentials)
          once.set(key, caller)
        }
        return caller
      }
      const due = [...sessions].filter((session) => everyone || session.recheckAt <= now)
      const failures = (await Promise.allSettled(due.map((session) => session.recheck(shared)))).filter((r) => r.status === 'rejected')
      if (failures.length > 0) log.warn({ err: failures[0]?.reason, connections: failures.length }, 'could not check the credentials of open WebSocket connections; retrying')
    } finally {
      running = false
    }
  }

  // tick() reports its own failures; a rejection here would be a bug's.
  const timer = setInterval(() => { tick().catch((error: unknown) => log.error({ err: error }, 'the WebSocket credential check failed')) }, intervalMs)
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
