import { validationError } from '../errors.js'
import { characterCount, isWellFormedText } from '../shared/text.js'

export const ROLES = ['admin', 'editor', 'viewer'] as const
export type Role = typeof ROLES[number]

export const SCOPES = ['people:read', 'people:write', 'messages:send', 'admin'] as const
export type Scope = typeof SCOPES[number]

/** What each role may do; the contract's table (docs/API.md, "Identity and authentication"). */
export const SCOPES_OF_ROLE: Readonly<Record<Role, readonly Scope[]>> = {
  admin: ['people:read', 'people:write', 'messages:send', 'admin'],
  editor: ['people:read', 'people:write', 'messages:send'],
  viewer: ['people:read']
}

export interface Account {
  id: string
  username: string
  role: Role
  /** Self-describing (algorithm, parameters, salt, hash); never leaves the service. */
  passwordHash: string
  /** A disabled account can neither log in nor act through its keys. */
  disabled: boolean
  /**
   * Goes up whenever the account's tokens must stop working (role or
   * password changed, disabled, deleted): a token carries the version it was
   * issued under and is refused once they differ.
   */
  tokenVersion: number
  /**
   * Set when a deletion has begun and not yet finished (an account deleted
   * in steps): the account is disabled and can no longer be changed, only
   * deleted.
   */
  deleting: boolean
  createdAt: Date
}

/** An account as others may see it: no password material, no token version. */
export type AccountView = Omit<Account, 'passwordHash' | 'tokenVersion' | 'deleting'>

export const toAccountView = ({ id, username, role, disabled, createdAt }: Account): AccountView =>
  ({ id, username, role, disabled, createdAt })

/** What an admin may change on an account (PATCH /users/<id>). */
export interface AccountChanges {
  role?: Role
  disabled?: boolean
  password?: string
}

/** Holds the admin scope now: what the last-admin rule protects. */
export const isEnabledAdmin = (account: Pick<Account, 'role' | 'disabled'>): boolean =>
  account.role === 'admin' && !account.disabled

export interface NewAccountInput {
  username: string
  password: string
  role: Role
}

export const ACCOUNT_LIMITS = {
  usernameLength: 64,
  // NIST SP 800-63B-4: 15 for a password that is the only factor.
  passwordMinLength: 15,
  // Long enough for any passphrase, short enough that hashing it costs nothing extra.
  passwordMaxLength: 1024
} as const

// Printable, no spaces or look-alike punctuation: usernames end up in logs and URLs.
const USERNAME = /^[A-Za-z0-9._@-]+$/

/** Whether `value`, NFKC-normalized, could be a username. */
export const isUsername = (value: unknown): value is string => {
  if (typeof value !== 'string') return false
  const normalized = value.normalize('NFKC')
  return normalized.length >= 1 && normalized.length <= ACCOUNT_LIMITS.usernameLength && USERNAME.test(normalized)
}

/** The username as stored: NFKC-normalized (a full-width `ａｄｍｉｎ` is `admin`). */
export const checkUsername = (username: unknown): string => {
  if (!isUsername(username)) {
    throw validationError('username', `must be 1 to ${ACCOUNT_LIMITS.usernameLength} letters, digits or . _ @ -`)
  }
  return username.normalize('NFKC')
}

/**
 * What makes two usernames one: NFKC, then case folded, so `Admin` and
 * `ａｄｍｉｎ` are `admin`. Accounts are unique by it and found by it.
 */
export const usernameKey = (username: string): string => username.normalize('NFKC').toLowerCase()

/**
 * A password as it is hashed: NFKC-normalized before anything else, so the
 * same password typed on any keyboard (composed or not, full-width or not)
 * is one password. A lone surrogate is refused: hashed, it becomes U+FFFD
 * (UTF-8 cannot encode it), so every password of lone surrogates of one
 * length was the same password.
 */
export const normalizePassword = (password: string): string => password.normalize('NFKC')

/** NFKC, then 15 to 1,024 characters not all white space (NIST SP 800-63B-4). Answers the NFKC form. */
export const checkPassword = (password: unknown): string => {
  if (typeof password !== 'string') throw validationError('password', 'must be a string')
  if (!isWellFormedText(password)) throw validationError('password', 'must be well-formed Unicode text (a lone surrogate is no character)')
  const normalized = normalizePassword(password)
  const length = characterCount(normalized)
  if (length < ACCOUNT_LIMITS.passwordMinLength || length > ACCOUNT_LIMITS.passwordMaxLength) {
    throw validationError('password', `must be ${ACCOUNT_LIMITS.passwordMinLength} to ${ACCOUNT_LIMITS.passwordMaxLength} characters once NFKC-normalized`)
  }
  if (/^\p{White_Space}*$/u.test(normalized)) throw validationError('password', 'must not be only white space')
  return normalized
}

export const isRole = (role: unknown): role is Role => (ROLES as readonly unknown[]).includes(role)

export const checkRole = (role: unknown): Role => {
  if (!isRole(role)) throw validationError('role', `must be one of ${ROLES.join(', ')}`)
  return role
}
