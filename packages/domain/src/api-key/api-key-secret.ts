import { hash, randomBytes, timingSafeEqual } from 'node:crypto'

/*
 * A key is `ps_` + 11 characters of lookup id (8 random bytes) + 43
 * characters of secret (32 random bytes), all base64url. The prefix makes
 * leaked keys easy to recognise (secret scanners, logs). The lookup id finds
 * the record without the database ever comparing secrets; the secret part
 * alone carries 256 bits, so a plain SHA-256 of the whole key is a safe
 * stored form: nothing can be guessed offline, and checking it costs a
 * microsecond instead of a memory-hard hash on every request.
 */
const PREFIX = 'ps_'
const LOOKUP_BYTES = 8
const SECRET_BYTES = 32
const LOOKUP_LENGTH = 11
const KEY_FORMAT = /^ps_[A-Za-z0-9_-]{54}$/

export const hashApiKey = (key: string): string => hash('sha256', key, 'base64url')

export interface ApiKeySecret {
  /** Shown to the creator once, never stored. */
  key: string
  lookupId: string
  secretHash: string
}

export const newApiKeySecret = (): ApiKeySecret => {
  const lookupId = randomBytes(LOOKUP_BYTES).toString('base64url')
  const key = `${PREFIX}${lookupId}${randomBytes(SECRET_BYTES).toString('base64url')}`
  return { key, lookupId, secretHash: hashApiKey(key) }
}

/** The lookup id of a well-formed key; undefined for anything that cannot be one. */
export const lookupIdOf = (presented: string): string | undefined =>
  KEY_FORMAT.test(presented) ? presented.slice(PREFIX.length, PREFIX.length + LOOKUP_LENGTH) : undefined

/** Compares hashes in constant time, so timing says nothing about how much of a key was right. */
export const apiKeyMatches = (presented: string, secretHash: string): boolean => {
  const expected = Buffer.from(secretHash, 'base64url')
  const actual = hash('sha256', presented, 'buffer')
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}
