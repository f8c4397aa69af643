/** What a request presented to identify its caller, before anything is verified. */
export type Credentials =
  | { kind: 'none' }
  | { kind: 'bearer', token: string }
  | { kind: 'apiKey', key: string }
  | { kind: 'unreadable', reason: string }

type HeaderValue = string | string[] | undefined

const BEARER = /^Bearer +([A-Za-z0-9._~+/=-]+) *$/i

/**
 * Reads `Authorization: Bearer <token>` or `X-API-Key: <key>`; the same
 * shapes arrive in a GraphQL connection-init payload. Exactly one of them.
 */
export const readCredentials = ({ authorization, apiKey }: { authorization?: HeaderValue, apiKey?: HeaderValue }): Credentials => {
  if (Array.isArray(authorization) || Array.isArray(apiKey)) return { kind: 'unreadable', reason: 'send each credential header once' }
  if (authorization !== undefined && apiKey !== undefined) {
    return { kind: 'unreadable', reason: 'send either Authorization or X-API-Key, not both' }
  }
  if (apiKey !== undefined) return { kind: 'apiKey', key: apiKey.trim() }
  if (authorization === undefined) return { kind: 'none' }
  const token = BEARER.exec(authorization)?.[1]
  return token === undefined
    ? { kind: 'unreadable', reason: 'Authorization must be "Bearer <access token>"' }
    : { kind: 'bearer', token }
}
