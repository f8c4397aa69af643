import type { Clock } from '../shared/clock.js'
import type { ApiKey } from './api-key.js'
import type { ApiKeyRepository } from './api-key.repository.js'
import { apiKeyMatches, lookupIdOf } from './api-key-secret.js'
import type { KeyRevocations } from './key-revocations.js'

export interface ApiKeyAuthenticatorOptions {
  /**
   * How long a cached key is trusted without a database read, as long as no
   * revocation happened. Bounds staleness when the revocation version is
   * per process and several instances run.
   */
  ttlMs?: number
  maxEntries?: number
  /** Told when the revocation version cannot be read; keys are then read from the database. */
  onRevocationsUnavailable?: (error: unknown) => void
}

interface Entry {
  key: ApiKey
  version: string
  expiresAt: number
}

/**
 * Finds the active key a caller presented. Hot path: a map lookup, one read
 * of the shared revocation version and one SHA-256; the database is read only
 * on a miss, after expiry, or after any revocation anywhere.
 */
export const apiKeyAuthenticator = (
  { apiKeys, revocations, clock }: { apiKeys: ApiKeyRepository, revocations: KeyRevocations, clock: Clock },
  { ttlMs = 30_000, maxEntries = 10_000, onRevocationsUnavailable = () => {} }: ApiKeyAuthenticatorOptions = {}
) => {
  const cache = new Map<string, Entry>()

  const remember = (lookupId: string, entry: Entry): void => {
    cache.delete(lookupId)
    // Insertion order is age order: drop the oldest when full.
    if (cache.size >= maxEntries) cache.delete(cache.keys().next().value as string)
    cache.set(lookupId, entry)
  }

  return async (presented: string): Promise<ApiKey | undefined> => {
    const lookupId = lookupIdOf(presented)
    if (lookupId === undefined) return undefined
    // Read the version before the database: a revocation that lands in
    // between changes it, so the entry stored below is already stale.
    let version: string | undefined
    try {
      version = await revocations.version()
    } catch (error) {
      // Nothing cached before the outage is trusted after it: a revocation
      // may have happened meanwhile that this instance was never told of.
      cache.clear()
      onRevocationsUnavailable(error)
    }
    const now = clock.now().getTime()
    let entry = cache.get(lookupId)
    if (entry === undefined || version === undefined || entry.version !== version || entry.expiresAt <= now) {
      const key = await apiKeys.findByLookupId(lookupId)
      if (key === undefined || key.revokedAt !== null) {
        cache.delete(lookupId)
        return undefined
      }
      entry = { key, version: version ?? '', expiresAt: now + ttlMs }
      // Without a known version nothing is cached: correctness over speed.
      if (version === undefined) cache.delete(lookupId)
      else remember(lookupId, entry)
    }
    return apiKeyMatches(presented, entry.key.secretHash) ? entry.key : undefined
  }
}

export type ApiKeyAuthenticator = ReturnType<typeof apiKeyAuthenticator>
