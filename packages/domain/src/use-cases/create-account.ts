import { checkPassword, checkRole, checkUsername, type AccountView, type NewAccountInput, toAccountView } from '../account/account.js'
import { usernameTaken } from '../errors.js'
import type { Ports } from '../ports.js'

/** Creates an account; who may do so is the adapters' policy (admins). */
export const createAccount = ({ accounts, passwords, clock, ids }: Pick<Ports, 'accounts' | 'passwords' | 'clock' | 'ids'>) =>
  async (input: NewAccountInput): Promise<AccountView> => {
    const username = checkUsername(input.username)
    const password = checkPassword(input.password)
    const role = checkRole(input.role)
    // A taken username costs a read, not a hash (the insert still decides a race).
    if (await accounts.findByUsername(username) !== undefined) throw usernameTaken(username)
    const account = { id: ids.next(), username, role, passwordHash: await passwords.hash(password), disabled: false, tokenVersion: 0, deleting: false, createdAt: clock.now() }
    await accounts.insert(account)
    return toAccountView(account)
  }
