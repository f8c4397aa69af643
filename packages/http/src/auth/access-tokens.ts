import { createHash } from 'node:crypto'
import fastifyJwt from '@fastify/jwt'
import { BoundedMap, type Account, type TokenSubject, unauthenticated } from '@people-service/domain'
import type { FastifyInstance } from 'fastify'

export interface TokenSettings {
  /** HMAC secret of new tokens; every instance of a deployment shares it. */
  secret: string
  /**
   * The secret before a rotation: tokens it signed are still accepted until
   * it is removed (after the token lifetime has passed).
   */
  previousSecret?: string
  issuer?: string
  audience?: string
  /** Lifetime of an access token. */
  ttlSeconds?: number
}

export const TOKEN_DEFAULTS = { issuer: 'people-service', audience: 'people-service', ttlSeconds: 900 } as const

/**
 * The `kid` header names which secret signed a token without revealing it:
 * a hash of the secret, as guessable as the HMAC on the token itself.
 */
export const kidOf = (secret: string): string =>
  createHash('sha256').update(`people-service/jwt-kid/${secret}`).digest('base64url').slice(0, 16)

export interface AccessTokens {
  /** A token for the account as it is now: its token version goes in, so a later change ends it. */
  issue(account: Pick<Account, 'id' | 'tokenVersion'>): string
  /**
   * The account and token version a token names; throws UNAUTHENTICATED for
   * anything but a well-signed, unexpired token. Whether that version is
   * still the account's is for the authenticator to check.
   */
  verify(token: string): TokenSubject
  readonly ttlSeconds: number
}

const invalidToken = () => unauthenticated('the access token is invalid or expired')

interface Claims {
  sub?: unknown
  /** The account's token version at issue. */
  tv?: unknown
  exp?: unknown
}

// Tokens verified lately, by their whole text (signed, so only tokens this
// deployment issued get in): each is good until it expires.
const VERIFIED_TOKENS = 10_000

/**
 * Registers @fastify/jwt pinned down: HS256 only (no `none`, no HS512, no
 * key confusion), `exp`, `sub`, `iss` and `aud` required and checked.
 * Verification errors of every kind, including the algorithm mismatches
 * @fastify/jwt reports as plain errors (a 500), become UNAUTHENTICATED.
 */
export const installAccessTokens = async (app: FastifyInstance, settings: TokenSettings): Promise<AccessTokens> => {
  const { secret, previousSecret } = settings
  const issuer = settings.issuer ?? TOKEN_DEFAULTS.issuer
  const audience = settings.audience ?? TOKEN_DEFAULTS.audience
  const ttlSeconds = settings.ttlSeconds ?? TOKEN_DEFAULTS.ttlSeconds
  const currentKid = kidOf(secret)
  const previousKid = previousSecret === undefined ? undefined : kidOf(previousSecret)

  await app.register(fastifyJwt, {
    secret,
    sign: { algorithm: 'HS256', iss: issuer, aud: audience, expiresIn: ttlSeconds, kid: currentKid },
    verify: { algorithms: ['HS256'], allowedIss: issuer, allowedAud: audience, requiredClaims: ['sub', 'exp', 'iss', 'aud'] },
    decode: { complete: true }
  })

  const claimsOf = (token: string): Claims => {
    const header = app.jwt.decode<{ header: { kid?: unknown } }>(token)?.header
    if (header === undefined) throw invalidToken()
    if (header.kid === currentKid) return app.jwt.verify<Claims>(token)
    if (previousKid !== undefined && header.kid === previousKid) return app.jwt.verify<Claims>(token, { key: previousSecret })
    throw invalidToken()
  }

  // A signature and its claims do not change: a token is checked once and its
  // subject kept until the token expires. Whether the account still accepts
  // it (revocations) is checked on every use by the authenticator.
  const verified = new BoundedMap<string, { subject: TokenSubject, expiresAt: number }>(VERIFIED_TOKENS)

  return {
    ttlSeconds,
    issue: (account) => app.jwt.sign({ sub: account.id, tv: account.tokenVersion }),
    verify (token) {
      const known = verified.get(token)
      if (known !== undefined) {
        if (known.expiresAt > Date.now()) return known.subject
        verified.delete(token)
      }
      let claims: Claims
      try {
        claims = claimsOf(token)
      } catch {
        throw invalidToken()
      }
      if (typeof claims.sub !== 'string' || claims.sub === '' || !Number.isSafeInteger(claims.tv) || typeof claims.exp !== 'number') throw invalidToken()
      const subject: TokenSubject = { accountId: claims.sub, tokenVersion: claims.tv as number }
      verified.remember(token, { subject, expiresAt: claims.exp * 1000 })
      return subject
    }
  }
}
