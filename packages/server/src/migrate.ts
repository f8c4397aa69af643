import { migrateDown, migrateToLatest, migrationStatus, type DatabaseHandle } from '@people-service/infra'
import { parseCommandLine, runCommand, UsageError } from './command-line.js'
import { loadConfig } from './config.js'
import { openDatabase } from './open-database.js'

/*
 * npm run migrate -- status|up|down
 * Shows or moves the schema of the configured database (DATABASE_URL). The
 * server applies pending migrations itself at start; this is for looking
 * and for rolling back by hand.
 */

const USAGE = `usage: npm run migrate -- <command>

  status   list every migration, applied (with when) or pending
  up       apply every pending migration
  down     undo the last applied migration (repeat to go further back)

The database is DATABASE_URL's (default sqlite:./data/people.db).
Back the database up before going down: a down step drops what its migration added.
`

const commands: Record<string, (handle: DatabaseHandle) => Promise<string>> = {
  async status (handle) {
    const states = await migrationStatus(handle)
    const width = Math.max(...states.map((m) => m.name.length))
    return states.map(({ name, executedAt, reversible }) =>
      `${name.padEnd(width)}  ${executedAt === undefined ? 'pending' : `applied ${executedAt.toISOString()}`}${reversible ? '' : '  (no down)'}`
    ).join('\n')
  },
  async up (handle) {
    const { results = [] } = await migrateToLatest(handle)
    return results.length === 0 ? 'nothing to apply: the schema is up to date' : results.map((r) => `applied ${r.migrationName}`).join('\n')
  },
  async down (handle) {
    const { results = [] } = await migrateDown(handle)
    return results.length === 0 ? 'nothing to undo: no migration is applied' : results.map((r) => `undid ${r.migrationName}`).join('\n')
  }
}

const main = async (): Promise<void> => {
  const parsed = parseCommandLine({ options: { help: { type: 'boolean', short: 'h' } }, allowPositionals: true })
  if (parsed.values.help) {
    process.stdout.write(USAGE)
    return
  }
  const [name, ...rest] = parsed.positionals
  const command = name === undefined ? undefined : commands[name]
  if (command === undefined || rest.length > 0) {
    throw new UsageError(name === undefined ? 'which command?' : `unknown command ${JSON.stringify([name, ...rest].join(' '))}`)
  }
  const config = loadConfig()
  const database = openDatabase({ url: config.databaseUrl, poolSize: 1 })
  try {
    process.stdout.write(`${await command(database)}\n`)
  } finally {
    await database.close()
  }
}

runCommand('migrate', USAGE, main)
