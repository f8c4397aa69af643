import { migrateToLatest, seedDatabase } from '@people-service/infra'
import { parseCommandLine, runCommand, UsageError } from './command-line.js'
import { loadConfig } from './config.js'
import { seedProgress } from './seed-progress.js'
import { openDatabase } from './open-database.js'

/*
 * npm run seed -- --people N --friends F --messages M
 * Fills the configured database (DATABASE_URL) with synthetic data.
 */

const USAGE = `usage: npm run seed -- [--people N] [--friends F] [--messages M]

  --people N     people to add (default 1000)
  --friends F    friends each of them gets, exactly (default 20; at most N - 1;
                 with F and N both odd, one person has F - 1)
  --messages M   messages sent to each of them (default 3)

The data goes into DATABASE_URL's database (default sqlite:./data/people.db),
migrated first, next to what is already there. Progress goes to stderr (a bar
on a terminal), the result and the time taken to stdout. Each table loads in
one transaction, which an interruption undoes; meanwhile the table is locked,
and what it can do without is built at the end: seed a database no server is
busy with.

Seeding records no events (GET /events, webhooks, NATS): synthetic data is not
a change anyone made, and a million people would flood every consumer.
`

const count = (value: string | undefined, name: string, fallback: number): number => {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, not ${JSON.stringify(value)}`)
  return Number(value)
}

const main = async (): Promise<void> => {
  const { values } = parseCommandLine({
    options: { people: { type: 'string' }, friends: { type: 'string' }, messages: { type: 'string' }, help: { type: 'boolean', short: 'h' } }
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return
  }
  const options = {
    people: count(values.people, 'people', 1000),
    friends: count(values.friends, 'friends', 20),
    messages: count(values.messages, 'messages', 3)
  }
  const config = loadConfig()
  const database = openDatabase({ url: config.databaseUrl, sqliteSynchronous: 'NORMAL' })
  const started = performance.now()
  try {
    await migrateToLatest(database)
    const result = await seedDatabase(database, { ...options, onProgress: seedProgress(process.stderr) })
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    process.stdout.write(`seeded ${result.ids.length} people, ${result.friendships} friendships, ${result.messages} messages in ${seconds} s; no events recorded\n`)
  } finally {
    await database.close()
  }
}

runCommand('seed', USAGE, main)
