import { type AccountChanges, type AccountView, checkPassword, checkRole, isEnabledAdmin, toAccountView } from '../account/account.js'
import { accountData, changeEvents, subjects, type Actor } from '../change/change-event.js'
import { accountBeingDeleted, accountNotFound, lastAdmin, validationError } from '../errors.js'
import type { Ports } from '../ports.js'
import { isId } from '../shared/ids.js'

/**
 * Changes an account's role, disabled flag or password. A new role or
 * password, or disabling, ends every token issued before: the token version
 * goes up in the same transaction. Every instance is told of any change once
 * it is committed. The last enabled admin keeps being one. An account whose
 * deletion has begun cannot change (ACCOUNT_BEING_DELETED): deleting it
 * again finishes it.
 */
export const updateAccount = ({ accounts, passwords, revocations, clock, ids }: Pick<Ports, 'accounts' | 'passwords' | 'revocations' | 'clock' | 'ids'>) =>
  async (actor: Actor, id: string, changes: AccountChanges): Promise<AccountView> => {
    const role = changes.role === undefined ? undefined : checkRole(changes.role)
    if (changes.disabled !== undefined && typeof changes.disabled !== 'boolean') throw validationError('disabled', 'must be true or false')
    const password = changes.password === undefined ? undefined : checkPassword(changes.password)
    // The account is looked up before any hashing: a request about no account
    // costs a read, not a third of a second of scrypt.
    if (password !== undefined) {
      const target = isId(id) ? await accounts.findById(id) : undefined
      if (target === undefined) throw accountNotFound(id)
      if (target.deleting) throw accountBeingDeleted(id)
    }
    // Hashed before the transaction: it takes a third of a second, and other
    // account changes wait while the transaction is open.
    const passwordHash = password === undefined ? undefined : await passwords.hash(password)
    const { account, changed } = await accounts.changeExclusively(async (tx) => {
      const current = isId(id) ? await tx.findById(id) : undefined
      if (current === undefined) throw accountNotFound(id)
      // Its keys are going: enabled again, it could act (and become the last admin) before the end.
      if (current.deleting) throw accountBeingDeleted(id)
      const next = {
        ...current,
        role: role ?? current.role,
        disabled: changes.disabled ?? current.disabled,
        passwordHash: passwordHash ?? current.passwordHash
      }
      if (isEnabledAdmin(current) && !isEnabledAdmin(next) && await tx.countEnabledAdmins() <= 1) throw lastAdmin()
      const revoked = next.role !== current.role || passwordHash !== undefined || (next.disabled && !current.disabled)
      if (revoked) next.tokenVersion = current.tokenVersion + 1
      const changed = revoked || next.disabled !== current.disabled
      if (changed) {
        await tx.update(next)
        tx.changes.record(changeEvents({ clock, ids }, actor)('account.updated', subjects.account(id), accountData(toAccountView(next))))
      }
      return { account: next, changed }
    })
    // Every change, enabling included: caches hold the account as it was.
    if (changed) await revocations.revoked()
    return toAccountView(account)
  }
