import type { Caller, CallerAuthenticator } from '@people-service/domain'
import { unauthenticated } from '@people-service/domain'
import type { AccessTokens } from './access-tokens.js'
import type { Credentials } from './credentials.js'

export type Authenticate = (credentials: Credentials) => Promise<Caller>

/**
 * Turns credentials into a verified caller or UNAUTHENTICATED, checked
 * against the current state of the key and its account: a revoked key, a
 * token issued before its account's role or password changed, and any
 * credential of a disabled or deleted account are refused. Knows nothing of
 * HTTP, so GraphQL subscriptions can use it on a connection-init payload
 * and check open connections again after a revocation.
 */
export const createAuthenticator = ({ tokens, callers }: { tokens: AccessTokens, callers: Pick<CallerAuthenticator, 'apiKey' | 'accessToken'> }): Authenticate =>
  async (credentials) => {
    switch (credentials.kind) {
      case 'none':
        throw unauthenticated()
      case 'unreadable':
        throw unauthenticated(credentials.reason)
      case 'bearer': {
        const caller = await callers.accessToken(tokens.verify(credentials.token))
        if (caller === undefined) throw unauthenticated('the access token is invalid or expired')
        return caller
      }
      case 'apiKey': {
        const caller = await callers.apiKey(credentials.key)
        if (caller === undefined) throw unauthenticated('the API key is unknown or revoked')
        return caller
      }
    }
  }
