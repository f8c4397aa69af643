import type { Caller, CallerAuthenticator } from '@people-service/domain'
import { unauthenticated } from '@people-service/domain'
import type { AccessTokens } from './access-tokens.js'
import type { Credentials } from './credentials.js'

/**
 * A caller, at once when the credential was verified recently and nothing
 * was revoked since (no promise, no turn of the event loop), else a promise.
 * Throws (or rejects with) UNAUTHENTICATED.
 */
export type Authenticate = (credentials: Credentials, revocationVersion?: string) => Caller | Promise<Caller>

const refusedToken = () => unauthenticated('the access token is invalid or expired')
const refusedKey = () => unauthenticated('the API key is unknown or revoked')

const tokenCaller = (caller: Caller | undefined): Caller => {
  if (caller === undefined) throw refusedToken()
  return caller
}
const keyCaller = (caller: Caller | undefined): Caller => {
  if (caller === undefined) throw refusedKey()
  return caller
}

/**
 * Turns credentials into a verified caller or UNAUTHENTICATED, checked
 * against the current state of the key and its account: a revoked key, a
 * token issued before its account's role or password changed, and any
 * credential of a disabled or deleted account are refused. Knows nothing of
 * HTTP, so GraphQL subscriptions can use it on a connection-init payload
 * and check open connections again after a revocation.
 */
export const createAuthenticator = ({ tokens, callers }: { tokens: AccessTokens, callers: Pick<CallerAuthenticator, 'apiKey' | 'accessToken'> }): Authenticate =>
  (credentials, revocationVersion) => {
    switch (credentials.kind) {
      case 'none':
        throw unauthenticated()
      case 'unreadable':
        throw unauthenticated(credentials.reason)
      case 'bearer': {
        const caller = callers.accessToken(tokens.verify(credentials.token), revocationVersion)
        return caller instanceof Promise ? caller.then(tokenCaller) : tokenCaller(caller)
      }
      case 'apiKey': {
        const caller = callers.apiKey(credentials.key, revocationVersion)
        return caller instanceof Promise ? caller.then(keyCaller) : keyCaller(caller)
      }
    }
  }
