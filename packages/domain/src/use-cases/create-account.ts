import { checkPassword, checkRole, checkUsername, type AccountView, type NewAccountInput, toAccountView } from '../account/account.js'
import { accountData, changeEvents, subjects, type Actor } from '../change/change-event.js'
import { usernameTaken } from '../errors.js'
import type { Ports } from '../ports.js'

type CreateAccountPorts = Pick<Ports, 'accounts' | 'passwords' | 'clock' | 'ids'>

/**
 * Stores a new account with its event. `actorOf` names who created it,
 * given the new account's id (the bootstrap admin creates itself).
 */
export const insertAccount = ({ accounts, passwords, clock, ids }: CreateAccountPorts) =>
  async (input: NewAccountInput, actorOf: (id: string) => Actor): Promise<AccountView> => {
    const username = checkUsername(input.username)
    const password = checkPassword(input.password)
    const role = checkRole(input.role)
    // A taken username costs a read, not a hash (the insert still decides a race).
    if (await accounts.findByUsername(username) !== undefined) throw usernameTaken(username)
    const account = { id: ids.next(), username, role, passwordHash: await passwords.hash(password), disabled: false, tokenVersion: 0, deleting: false, createdAt: clock.now() }
    const view = toAccountView(account)
    await accounts.changeExclusively(async (tx) => {
      await tx.insert(account)
      tx.changes.record(changeEvents({ clock, ids }, actorOf(account.id))('account.created', subjects.account(account.id), accountData(view)))
    })
    return view
  }

/** Creates an account; who may do so is the adapters' policy (admins). */
export const createAccount = (ports: CreateAccountPorts) => {
  const insert = insertAccount(ports)
  return async (actor: Actor, input: NewAccountInput): Promise<AccountView> => insert(input, () => actor)
}
