import { SCOPES, type Scope } from '../account/account.js'
import { validationError } from '../errors.js'
import { characterCount, checkDisplayName } from '../shared/text.js'

export interface ApiKey {
  id: string
  /** The account that created the key and answers for it. */
  ownerId: string
  name: string
  scopes: Scope[]
  /** Requests per window; null: the service's default budget. */
  rateLimit: number | null
  /** The public part of the key that finds its record; not a secret on its own. */
  lookupId: string
  /** SHA-256 of the whole key; the key itself is never stored. */
  secretHash: string
  createdAt: Date
  revokedAt: Date | null
}

/** An API key as its owner may see it after creation: no secret material. */
export type ApiKeyView = Pick<ApiKey, 'id' | 'name' | 'scopes' | 'rateLimit' | 'createdAt'>

export const toApiKeyView = ({ id, name, scopes, rateLimit, createdAt }: ApiKey): ApiKeyView =>
  ({ id, name, scopes, rateLimit, createdAt })

export interface NewApiKeyInput {
  name: string
  /** Defaults to every scope of the creator. */
  scopes?: readonly string[]
  rateLimit?: number | null
}

export const API_KEY_LIMITS = { nameLength: 100, maxRateLimit: 1_000_000, defaultMaxPerAccount: 100 } as const

export const checkKeyName = (name: unknown): string => {
  if (typeof name !== 'string') throw validationError('name', `must be 1 to ${API_KEY_LIMITS.nameLength} characters`)
  const normalized = checkDisplayName('name', name)
  if (characterCount(normalized) > API_KEY_LIMITS.nameLength) throw validationError('name', `must be 1 to ${API_KEY_LIMITS.nameLength} characters`)
  return normalized
}

export const isScope = (scope: unknown): scope is Scope => (SCOPES as readonly unknown[]).includes(scope)

/** Known scopes, each once, in the canonical order. */
export const checkScopes = (scopes: readonly unknown[]): Scope[] => {
  const unknown = scopes.find((s) => !isScope(s))
  if (unknown !== undefined) throw validationError('scopes', `has an unknown scope ${JSON.stringify(unknown)}; known: ${SCOPES.join(', ')}`)
  return SCOPES.filter((s) => scopes.includes(s))
}

export const checkRateLimit = (rateLimit: unknown): number | null => {
  if (rateLimit === null || rateLimit === undefined) return null
  if (typeof rateLimit !== 'number' || !Number.isInteger(rateLimit) || rateLimit < 1 || rateLimit > API_KEY_LIMITS.maxRateLimit) {
    throw validationError('rateLimit', `must be an integer from 1 to ${API_KEY_LIMITS.maxRateLimit} or null`)
  }
  return rateLimit
}
