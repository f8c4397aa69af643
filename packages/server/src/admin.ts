import {
  insertAccount, generatedPassword, localKeyRevocations, scryptPasswordHasher, systemClock, updateAccount, uuidv7Generator, type Account
} from '@people-service/domain'
import { createDatabase, createRepositories, type DatabaseHandle } from '@people-service/infra'
import { parseCommandLine, runCommand, UsageError } from './command-line.js'
import { loadConfig } from './config.js'

/*
 * npm run admin -- list | recover <username>
 * The way back to an admin when none can log in (the bootstrap admin is
 * made at the very first start only, never again): run by whoever holds the
 * database, which is the trust the service itself has.
 */

const USAGE = `usage: npm run admin -- <command>

  list                 list the admin accounts (username, enabled or disabled)
  recover <username>   make <username> an enabled admin with a new password,
                       printed once; creates the account when there is none

The database is DATABASE_URL's (default sqlite:./data/people.db).
A recovered account's earlier tokens stop working; running instances see the
change within API_KEY_CACHE_TTL_MS.
`

const PAGE = 1000

const admins = async (handle: DatabaseHandle): Promise<Account[]> => {
  const { accounts } = createRepositories(handle)
  const found: Account[] = []
  for (let page = await accounts.list({ limit: PAGE }); page.length > 0; page = await accounts.list({ limit: PAGE, afterUsername: page.at(-1)!.username })) {
    found.push(...page.filter((account) => account.role === 'admin'))
    if (page.length < PAGE) break
  }
  return found
}

const commands: Record<string, { args: number, run: (handle: DatabaseHandle, args: string[], eventSource: string) => Promise<string> }> = {
  list: {
    args: 0,
    async run (handle) {
      const found = await admins(handle)
      if (found.length === 0) return 'no admin account: npm run admin -- recover <username> makes one'
      return found.map((a) => `${a.username}  ${a.disabled ? 'disabled' : 'enabled'}  ${a.id}`).join('\n')
    }
  },
  recover: {
    args: 1,
    async run (handle, [username], eventSource) {
      const ports = { ...createRepositories(handle, { eventSource }), passwords: scryptPasswordHasher(), revocations: localKeyRevocations(), clock: systemClock, ids: uuidv7Generator() }
      const password = generatedPassword()
      const existing = await ports.accounts.findByUsername(username!)
      if (existing === undefined) {
        // Made at the console: the account is its own actor in its event.
        const created = await insertAccount(ports)({ username: username!, password, role: 'admin' }, (id) => ({ kind: 'account', id }))
        return `created the admin account "${created.username}" with the password ${password} (shown only this once)`
      }
      await updateAccount(ports)({ kind: 'account', id: existing.id }, existing.id, { role: 'admin', disabled: false, password })
      return `the account "${existing.username}" is an enabled admin again, with the password ${password} (shown only this once)`
    }
  }
}

const main = async (): Promise<void> => {
  const parsed = parseCommandLine({ options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: true })
  if (parsed.values.help) {
    process.stdout.write(USAGE)
    return
  }
  const [name, ...args] = parsed.positionals
  const command = name === undefined ? undefined : commands[name]
  if (command === undefined || args.length !== command.args) {
    throw new UsageError(name === undefined ? 'which command?' : `cannot make sense of ${JSON.stringify([name, ...args].join(' '))}`)
  }
  const config = loadConfig()
  const database = createDatabase({ url: config.databaseUrl, poolSize: 1 })
  try {
    process.stdout.write(`${await command.run(database, args, config.eventSource)}\n`)
  } finally {
    await database.close()
  }
}

runCommand('admin', USAGE, main)
