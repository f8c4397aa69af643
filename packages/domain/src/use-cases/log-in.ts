import type { Account } from '../account/account.js'
import { passwordMatches } from '../account/password-check.js'
import { invalidCredentials } from '../errors.js'
import type { Ports } from '../ports.js'
import { hasNul, isWellFormedText } from '../shared/text.js'

/**
 * Checks a username and password. An unknown username and a wrong password
 * fail alike, with the same error after the same amount of hashing; so
 * does a disabled account, whatever the password. A password holding a
 * lone surrogate fails before any hashing, whoever it is for: hashed, it
 * would be read as U+FFFD, and so match a password that is not it.
 */
export const logIn = ({ accounts, passwords }: Pick<Ports, 'accounts' | 'passwords'>) =>
  async (username: string, password: string): Promise<Account> => {
    if (!isWellFormedText(password)) throw invalidCredentials()
    // No username holds U+0000 (PostgreSQL would refuse to compare it): no lookup.
    const account = hasNul(username) ? undefined : await accounts.findByUsername(username)
    const matches = await passwordMatches(passwords, password, account?.passwordHash ?? passwords.decoyHash)
    if (account === undefined || !matches || account.disabled) throw invalidCredentials()
    return account
  }
