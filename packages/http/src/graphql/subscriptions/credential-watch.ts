import type { Caller, KeyRevocations } from '@people-service/domain'
import type { FastifyBaseLogger } from 'fastify'
import type { SocketCredentials } from './socket-protocol.js'
import type { SocketSession } from './socket-session.js'

export interface CredentialWatchOptions {
  sessions: ReadonlySet<SocketSession>
  /** Read once a tick, for every check of that tick. */
  revocations: KeyRevocations
  authenticate(credentials: SocketCredentials, revocationVersion: string | undefined): Promise<Caller>
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
 * `intervalMs`, each open connection is checked as a request would be, from
 * the credential cache. The cache answers from memory while the revocation
 * version is unchanged and its entry younger than API_KEY_CACHE_TTL_MS,
 * and reads the database otherwise; connections that share credentials
 * share one check per tick. So a revocation announced (through Redis, or
 * in this process) closes the connection within a tick, and one never
 * heard of (another instance without Redis, or whose announcement was
 * lost) within the TTL and a tick. Checked only when the shared version
 * changed, such a connection had outlived its revocation: a key's for
 * good, a token's until it expired. The version is read once a tick for
 * all of them: read by each check, one Redis GET a connection had cost
 * 500 connections 21 ms of CPU a second.
 */
export const watchCredentials = ({ sessions, revocations, authenticate, intervalMs, log }: CredentialWatchOptions): { stop(): void } => {
  let running = false

  const tick = async (): Promise<void> => {
    if (running || sessions.size === 0) return
    running = true
    try {
      // Unreadable: each check reads it, and the database when it cannot.
      const version = await revocations.version().catch(() => undefined)
      const once = new Map<string, Promise<Caller>>()
      const shared = (credentials: SocketCredentials): Promise<Caller> => {
        const key = keyOf(credentials)
        let caller = once.get(key)
        if (caller === undefined) {
          caller = authenticate(credentials, version)
          once.set(key, caller)
        }
        return caller
      }
      const failures = (await Promise.allSettled([...sessions].map((session) => session.recheck(shared)))).filter((r) => r.status === 'rejected')
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
