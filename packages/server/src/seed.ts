import { parseArgs } from 'node:util'
import { createDatabase, migrateToLatest, seedDatabase } from '@people-service/infra'
import { ConfigError, loadConfig } from './config.js'

/*
 * npm run seed -- --people N --friends F --messages M
 * Fills the configured database (DATABASE_URL) with synthetic data.
 */

const USAGE = 'usage: npm run seed -- [--people N] [--friends F] [--messages M]'

const count = (value: string | undefined, name: string, fallback: number): number => {
  if (value === undefined) return fallback
  if (!/^\d+$/.test(value)) throw new ConfigError(`--${name}`, `must be a whole number (${USAGE})`)
  return Number(value)
}

const main = async (): Promise<void> => {
  const { values } = parseArgs({
    options: { people: { type: 'string' }, friends: { type: 'string' }, messages: { type: 'string' } }
  })
  const config = loadConfig()
  const options = {
    people: count(values.people, 'people', 1000),
    friends: count(values.friends, 'friends', 20),
    messages: count(values.messages, 'messages', 3)
  }
  const database = createDatabase({ url: config.databaseUrl, sqliteSynchronous: 'NORMAL' })
  const started = performance.now()
  try {
    await migrateToLatest(database)
    let last = 0
    const result = await seedDatabase(database, {
      ...options,
      onProgress (phase, done, total) {
        const now = performance.now()
        if (done < total && now - last < 250) return
        last = now
        const percent = total === 0 ? 100 : Math.floor((done / total) * 100)
        process.stderr.write(`\r${phase.padEnd(12)} ${String(done).padStart(10)} / ${total} (${percent}%)   ${done === total ? '\n' : ''}`)
      }
    })
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    process.stdout.write(`seeded ${result.ids.length} people, ${result.friendships} friendships, ${result.messages} messages in ${seconds} s\n`)
  } finally {
    await database.close()
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`\nseed failed: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(error instanceof ConfigError ? 2 : 1)
})
