import { checkPassword, toAccountView } from '../account/account.js'
import { accountData, changeEvents, subjects } from '../change/change-event.js'
import { passwordMatches } from '../account/password-check.js'
import { accountNotFound, invalidCredentials } from '../errors.js'
import type { Ports } from '../ports.js'

export interface ChangePasswordInput {
  currentPassword: string
  newPassword: string
}

/**
 * An account changes its own password, proving it knows the current one.
 * Every token issued before stops working, the one that asked included.
 * Its event (account.updated) names the account as the actor.
 */
export const changePassword = ({ accounts, passwords, revocations, clock, ids }: Pick<Ports, 'accounts' | 'passwords' | 'revocations' | 'clock' | 'ids'>) =>
  async (accountId: string, { currentPassword, newPassword }: ChangePasswordInput): Promise<void> => {
    const account = await accounts.findById(accountId)
    if (account === undefined) throw accountNotFound(accountId)
    if (!await passwordMatches(passwords, currentPassword, account.passwordHash)) throw invalidCredentials('the current password is wrong')
    const passwordHash = await passwords.hash(checkPassword(newPassword))
    await accounts.changeExclusively(async (tx) => {
      const current = await tx.findById(accountId)
      if (current === undefined) throw accountNotFound(accountId)
      await tx.update({ ...current, passwordHash, tokenVersion: current.tokenVersion + 1 })
      tx.changes.record(changeEvents({ clock, ids }, { kind: 'account', id: accountId })('account.updated', subjects.account(accountId), accountData(toAccountView(current))))
    })
    await revocations.revoked()
  }
