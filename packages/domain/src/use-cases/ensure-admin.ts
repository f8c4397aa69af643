import { randomBytes } from 'node:crypto'
import type { AccountView } from '../account/account.js'
import { isDomainError } from '../errors.js'
import type { Ports } from '../ports.js'
import { insertAccount } from './create-account.js'

export interface EnsureAdminResult {
  /** The account, when this call created it. */
  created?: AccountView
  /** The password made up for it, when none was given: to be shown once. */
  generatedPassword?: string
  /** Accounts exist already: nothing was created or changed. */
  existing?: true
}

/** A password for an admin nobody chose one for: 24 characters, 144 random bits. */
export const generatedPassword = (): string => randomBytes(18).toString('base64url')

/**
 * The first admin, at the very first start only: when the store holds no
 * account at all. Once any account exists the environment is ignored, so a
 * bootstrap admin deleted or renamed never comes back at a restart, and an
 * environment password never resets one. Its event names the account itself
 * as the actor: nobody else made it.
 */
export const ensureAdmin = (ports: Pick<Ports, 'accounts' | 'passwords' | 'clock' | 'ids'>) => {
  const create = insertAccount(ports)
  return async ({ username, password }: { username: string, password?: string }): Promise<EnsureAdminResult> => {
    if ((await ports.accounts.list({ limit: 1 })).length > 0) return { existing: true }
    const generated = password === undefined ? generatedPassword() : undefined
    try {
      const created = await create({ username, password: password ?? generated ?? '', role: 'admin' }, (id) => ({ kind: 'account', id }))
      return { created, ...(generated === undefined ? {} : { generatedPassword: generated }) }
    } catch (error) {
      // Another instance starting at the same time created it first.
      if (isDomainError(error) && error.code === 'USERNAME_TAKEN') return { existing: true }
      throw error
    }
  }
}
