import { isEnabledAdmin } from '../account/account.js'
import { changeEvents, subjects, type Actor } from '../change/change-event.js'
import { accountNotFound, lastAdmin } from '../errors.js'
import type { AccountChangeSet } from '../account/account.repository.js'
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
 * is disabled in it instead, with a new token version, marked as being
 * deleted (no admin can enable it again: updateAccount refuses), and the
 * revocation announced: it stops working at once, everywhere. Its keys then
 * go a step at a time, and the account in a last transaction, which checks
 * it again as the first did, so the rule and the revocation hold for that
 * transaction whatever the store went through meanwhile. Cut short, it
 * stays disabled and marked; deleting it again finishes. The event
 * commits with the transaction that deletes the account's row.
 */
export const deleteAccount = ({ accounts, revocations, clock, ids }: Pick<Ports, 'accounts' | 'revocations' | 'clock' | 'ids'>) =>
  async (actor: Actor, id: string, { beforeNextStep }: DeleteAccountOptions = {}): Promise<void> => {
    // 'gone': another deletion finished it meanwhile.
    const attempt = async (tx: AccountChangeSet, first: boolean): Promise<'deleted' | 'disabled' | 'gone'> => {
      const account = isId(id) ? await tx.findById(id) : undefined
      if (account === undefined) {
        if (first) throw accountNotFound(id)
        return 'gone'
      }
      if (isEnabledAdmin(account) && await tx.countEnabledAdmins() <= 1) throw lastAdmin()
      if (await tx.delete(id)) {
        tx.changes.record(changeEvents({ clock, ids }, actor)('account.deleted', subjects.account(id), { id }))
        return 'deleted'
      }
      await tx.update({ ...account, disabled: true, deleting: true, tokenVersion: account.tokenVersion + 1 })
      return 'disabled'
    }
    for (let first = true; ; first = false) {
      const outcome = await accounts.changeExclusively((tx) => attempt(tx, first))
      if (outcome === 'gone') return
      await revocations.revoked()
      if (outcome === 'deleted') return
      await accounts.shedKeys(id, beforeNextStep)
    }
  }
