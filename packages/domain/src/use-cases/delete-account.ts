import { isEnabledAdmin } from '../account/account.js'
import { accountNotFound, lastAdmin } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

export interface DeleteAccountOptions {
  /**
   * Awaited between the steps of an account deleted in steps (one with very
   * many keys; AccountChangeSet.delete): the caller's turn-taking.
   */
  beforeNextStep?: () => Promise<void>
}

/**
 * Deletes an account with its API keys; its tokens and keys stop working on
 * every instance. The people and messages it wrote stay. The last enabled
 * admin cannot go.
 *
 * An account the store will not delete in one transaction (very many keys)
 * is disabled in it instead, with a new token version, and the revocation
 * announced: it stops working at once, everywhere. Its keys then go a step
 * at a time, and the account last. Cut short, it stays disabled; deleting
 * it again finishes.
 */
export const deleteAccount = ({ accounts, revocations }: Pick<Ports, 'accounts' | 'revocations'>) =>
  async (id: string, { beforeNextStep }: DeleteAccountOptions = {}): Promise<void> => {
    const deleted = await accounts.changeExclusively(async (tx) => {
      const account = isId(id) ? await tx.findById(id) : undefined
      if (account === undefined) throw accountNotFound(id)
      if (isEnabledAdmin(account) && await tx.countEnabledAdmins() <= 1) throw lastAdmin()
      if (await tx.delete(id)) return true
      await tx.update({ ...account, disabled: true, tokenVersion: account.tokenVersion + 1 })
      return false
    })
    await revocations.revoked()
    // A disabled account makes no keys: once shed, the last transaction has
    // only the account to delete, unless another deletion took it first.
    for (let gone = deleted; !gone;) {
      await accounts.shedKeys(id, beforeNextStep)
      gone = await accounts.changeExclusively(async (tx) => await tx.findById(id) === undefined || tx.delete(id))
    }
  }
