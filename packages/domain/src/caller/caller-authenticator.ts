import type { Account } from '../account/account.js'
import { apiKeyMatches, lookupIdOf } from '../api-key/api-key-secret.js'
import type { Ports } from '../ports.js'
import { accountCaller, apiKeyCaller, type Caller } from './caller.js'
import { BoundedMap } from '../shared/bounded-map.js'

export interface CallerAuthenticatorOptions {
  /**
   * How long a verified credential is trusted without a database read, as
   * long as no revocation happened. Bounds staleness when the revocation
   * version is per process and several instances run.
   */
  ttlMs?: number
  /** Entries per cache (keys, accounts). */
  maxEntries?: number
  /** Told when the revocation version cannot be read; credentials are then checked against the database. */
  onRevocationsUnavailable?: (error: unknown) => void
}

/** What an access token names once its signature is checked. */
export interface TokenSubject {
  accountId: string
  /** The account's token version when the token was issued. */
  tokenVersion: number
}

interface Entry<T> {
  value: T
  version: string
  expiresAt: number
}

type Cache<T> = BoundedMap<string, Entry<T>>

interface KeyEntry {
  /** Undefined: the key exists but is revoked, or its account is disabled or gone. */
  caller: Caller | undefined
  secretHash: string
}

/**
 * Turns a presented API key, or the subject of a verified access token, into
 * the caller it stands for now: a revoked key, a token of an older version
 * and any credential of a disabled or deleted account are refused, and a key
 * acts only with the scopes its account's role still grants.
 *
 * Hot path: when the revocation version can be read without waiting (it
 * lives in this process), a key presented and matched before, or an account
 * read before, answers at once, with no promise: a map lookup and a
 * comparison of versions. Otherwise one read of the shared revocation
 * version, a map lookup, and for a key one SHA-256; the callers are built
 * once per cache entry. The database is read only on a miss, after expiry,
 * or after any revocation anywhere — every change to a key or an account
 * announces one.
 */
export const callerAuthenticator = (
  { accounts, apiKeys, revocations, clock }: Pick<Ports, 'accounts' | 'apiKeys' | 'revocations' | 'clock'>,
  { ttlMs = 5_000, maxEntries = 10_000, onRevocationsUnavailable = () => {} }: CallerAuthenticatorOptions = {}
) => {
  const keys = new BoundedMap<string, Entry<KeyEntry | undefined>>(maxEntries)
  const owners = new BoundedMap<string, Entry<Account | undefined>>(maxEntries)
  // Keys whose secret matched, by the whole presented key: a key seen again
  // skips the SHA-256. Only matches are kept, so made-up keys cannot fill it;
  // each entry lives no longer than the lookup entry it was checked against.
  // A wrong key is told apart by the map's hash of the whole string, before
  // any character is compared, so timing says nothing about the secret.
  const matched = new BoundedMap<string, Entry<Caller | undefined>>(maxEntries)

  // Read before the database: a revocation that lands in between changes
  // it, so an entry stored under the old value is already stale.
  const currentVersion = async (): Promise<string | undefined> => {
    try {
      return await revocations.version()
    } catch (error) {
      // Nothing cached before the outage is trusted after it: a revocation
      // may have happened meanwhile that this instance was never told of.
      keys.clear()
      owners.clear()
      matched.clear()
      onRevocationsUnavailable(error)
      return undefined
    }
  }

  /** The entry when it was stored under this version and has not expired. */
  const freshEntry = <T>(cache: Cache<T>, id: string, version: string | undefined, now: number): Entry<T> | undefined => {
    const entry = cache.get(id)
    return entry !== undefined && version !== undefined && entry.version === version && entry.expiresAt > now ? entry : undefined
  }

  const cached = async <T>(
    cache: Cache<T>, id: string, version: string | undefined, load: () => Promise<T>
  ): Promise<T> => {
    const now = clock.now().getTime()
    const entry = freshEntry(cache, id, version, now)
    if (entry !== undefined) return entry.value
    const value = await load()
    // Without a known version nothing is cached: correctness over speed.
    // Nor is a lookup id that names no key: anyone can make those up, and
    // they must not push real keys out of the cache.
    if (version === undefined || value === undefined) cache.delete(id)
    else cache.remember(id, { value, version, expiresAt: now + ttlMs })
    return value
  }

  const loadKey = async (lookupId: string): Promise<KeyEntry | undefined> => {
    const key = await apiKeys.findByLookupId(lookupId)
    if (key === undefined) return undefined
    const owner = key.revokedAt === null ? await accounts.findById(key.ownerId) : undefined
    const usable = owner !== undefined && !owner.disabled
    return { caller: usable ? apiKeyCaller(key, owner) : undefined, secretHash: key.secretHash }
  }

  const checkApiKey = async (presented: string, lookupId: string): Promise<Caller | undefined> => {
    const version = await currentVersion()
    const now = clock.now().getTime()
    const known = freshEntry(matched, presented, version, now)
    if (known !== undefined) return known.value
    const entry = await cached(keys, lookupId, version, () => loadKey(lookupId))
    if (entry === undefined || !apiKeyMatches(presented, entry.secretHash)) return undefined
    const checked = freshEntry(keys, lookupId, version, now)
    if (checked !== undefined) matched.remember(presented, { value: entry.caller, version: checked.version, expiresAt: checked.expiresAt })
    return entry.caller
  }

  const accountCallerOf = (account: Account | undefined, tokenVersion: number): Caller | undefined =>
    account === undefined || account.disabled || account.tokenVersion !== tokenVersion ? undefined : callerOf(account)

  return {
    /**
     * The caller a key stands for, or undefined; at once (no promise) when
     * answered from memory. `version`: the revocation version as the caller
     * read it just before, for many credentials at once (the WebSocket
     * credential watch), in place of reading it here for each.
     */
    apiKey (presented: string, version: string | undefined = revocations.peek?.()): Caller | undefined | Promise<Caller | undefined> {
      // Only a well-formed key that matched is in `matched`: its format need not be checked again.
      const known = freshEntry(matched, presented, version, clock.now().getTime())
      if (known !== undefined) return known.value
      const lookupId = lookupIdOf(presented)
      return lookupId === undefined ? undefined : checkApiKey(presented, lookupId)
    },

    /** The caller a token's subject stands for now, or undefined; at once (no promise) when answered from memory. `version` as for apiKey. */
    accessToken ({ accountId, tokenVersion }: TokenSubject, version: string | undefined = revocations.peek?.()): Caller | undefined | Promise<Caller | undefined> {
      const known = freshEntry(owners, accountId, version, clock.now().getTime())
      if (known !== undefined) return accountCallerOf(known.value, tokenVersion)
      return currentVersion()
        .then((version) => cached(owners, accountId, version, () => accounts.findById(accountId)))
        .then((account) => accountCallerOf(account, tokenVersion))
    }
  }
}

// One caller object per account state: the hot path allocates nothing.
const callers = new WeakMap<Account, Caller>()
const callerOf = (account: Account): Caller => {
  let caller = callers.get(account)
  if (caller === undefined) {
    caller = accountCaller(account)
    callers.set(account, caller)
  }
  return caller
}

export type CallerAuthenticator = ReturnType<typeof callerAuthenticator>
