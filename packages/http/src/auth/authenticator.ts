import { apiKeyCaller, type ApiKeyAuthenticator, type Caller, unauthenticated } from '@people-service/domain'
import type { AccessTokens } from './access-tokens.js'
import type { Credentials } from './credentials.js'

export type Authenticate = (credentials: Credentials) => Promise<Caller>

/**
 * Turns credentials into a verified caller or UNAUTHENTICATED. Knows nothing
 * of HTTP, so GraphQL subscriptions can use it on a connection-init payload.
 */
export const createAuthenticator = ({ tokens, authenticateApiKey }: { tokens: AccessTokens, authenticateApiKey: ApiKeyAuthenticator }): Authenticate =>
  async (credentials) => {
    switch (credentials.kind) {
      case 'none':
        throw unauthenticated()
      case 'unreadable':
        throw unauthenticated(credentials.reason)
      case 'bearer':
        return tokens.verify(credentials.token)
      case 'apiKey': {
        const key = await authenticateApiKey(credentials.key)
        if (key === undefined) throw unauthenticated('the API key is unknown or revoked')
        return apiKeyCaller(key)
      }
    }
  }
