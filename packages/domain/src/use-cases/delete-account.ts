import { isEnabledAdmin } from '../account/account.js'
import { accountNotFound, lastAdmin } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/**
 * Deletes an account with its API keys; its tokens and keys stop working on
 * every instance. The people and messages it wrote stay. The last enabled
 * admin cannot go.
 */
export const deleteAccount = ({ accounts, revocations }: Pick<Ports, 'accounts' | 'revocations'>) =>
  async (id: string): Promise<void> => {
    await accounts.changeExclusively(async (tx) => {
      const account = isId(id) ? await tx.findById(id) : undefined
      if (account === undefined) throw accountNotFound(id)
      if (isEnabledAdmin(account) && await tx.countEnabledAdmins() <= 1) throw lastAdmin()
      await tx.delete(id)
    })
    await revocations.revoked()
  }
