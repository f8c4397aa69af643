import { randomBytes } from 'node:crypto'
import type { AccountView } from '../account/account.js'
import { isDomainError } from '../errors.js'
import type { Ports } from '../ports.js'
import { createAccount } from './create-account.js'

export interface EnsureAdminResult {
  /** The account, when this call created it. */
  created?: AccountView
  /** The password made up for it, when none was given: to be shown once. */
  generatedPassword?: string
  /** The account was there already, and was left as it was (password included). */
  existing?: true
}

/**
 * The first admin: created when no account of that name exists, left alone
 * otherwise (an existing password is never reset from the environment).
 */
export const ensureAdmin = (ports: Pick<Ports, 'accounts' | 'passwords' | 'clock' | 'ids'>) => {
  const create = createAccount(ports)
  return async ({ username, password }: { username: string, password?: string }): Promise<EnsureAdminResult> => {
    if (await ports.accounts.findByUsername(username) !== undefined) return { existing: true }
    const generated = password === undefined ? randomBytes(18).toString('base64url') : undefined
    try {
      const created = await create({ username, password: password ?? generated ?? '', role: 'admin' })
      return { created, ...(generated === undefined ? {} : { generatedPassword: generated }) }
    } catch (error) {
      // Another instance starting at the same time created it first.
      if (isDomainError(error) && error.code === 'USERNAME_TAKEN') return { existing: true }
      throw error
    }
  }
}
