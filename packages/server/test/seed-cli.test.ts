import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { createDatabase, createRepositories } from '@people-service/infra'
import { tempDatabaseUrl } from './helper.js'

/** The command `npm run seed` runs once the build is done. */
const SEED = fileURLToPath(new URL('../dist/seed.js', import.meta.url))

const seed = (databaseUrl: string, args: string[]) =>
  spawnSync(process.execPath, [SEED, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', timeout: 60_000 })

t.test('npm run seed fills the configured database, and a second run adds to it', async (t) => {
  const url = tempDatabaseUrl(t)
  const first = seed(url, ['--people', '40', '--friends', '4', '--messages', '2'])
  t.equal(first.status, 0, first.stderr)
  t.match(first.stdout, /^seeded 40 people, 80 friendships, 80 messages in \d+\.\d s; no events recorded\n$/)
  // Not a terminal: plain lines on stderr, one as each table is done, no bar drawn over itself.
  for (const done of ['people 40 / 40', 'friendships 80 / 80', 'messages 80 / 80']) {
    t.match(first.stderr, new RegExp(`^${done} \\(100%\\) done in \\d+\\.\\d s, \\d+\\.\\d s in all$`, 'm'))
  }
  t.notMatch(first.stderr, /\r/)
  t.equal(seed(url, ['--people', '10', '--friends', '2', '--messages', '1']).status, 0)

  const handle = createDatabase({ url })
  t.teardown(() => handle.close())
  const { people, friendships, messages, changeFeed } = createRepositories(handle)
  const everyone = await people.list({ limit: 100 })
  t.equal(everyone.length, 50)
  t.equal(await changeFeed.lastPosition(), 0, 'seeding records no event: the log holds changes people made')
  const first40 = everyone.slice(0, 40)
  t.same(await Promise.all(first40.map(async ({ id }) => (await friendships.listFriends(id, 10)).length)), first40.map(() => 4), 'four friends each')
  t.equal((await messages.listForPerson(first40[0]?.id as string, { limit: 10 })).length, 2)
  // Both runs use the same seed, so a name may come twice.
  const found = await people.list({ limit: 10, nameContains: first40[7]?.name as string })
  t.ok(found.some(({ id }) => id === first40[7]?.id), 'the name search finds seeded people')
})

t.test('npm run seed refuses a count that is not a whole number, naming the option', async (t) => {
  const result = seed(tempDatabaseUrl(t), ['--people', 'many'])
  t.equal(result.status, 2)
  t.match(result.stderr, /--people/)
})

t.test('npm run seed -- --help explains every option and touches no database', async (t) => {
  for (const flag of ['--help', '-h']) {
    const result = seed('sqlite:/nonexistent-dir/never-created.db', [flag])
    t.equal(result.status, 0, result.stderr)
    t.match(result.stdout, /^usage: npm run seed -- \[--people N\] \[--friends F\] \[--messages M\]/)
    for (const option of ['--people N', '--friends F', '--messages M', 'DATABASE_URL']) t.match(result.stdout, option)
    t.equal(result.stderr, '')
  }
  const unknown = seed('sqlite:/nonexistent-dir/never-created.db', ['--frends', '5'])
  t.equal(unknown.status, 2)
  t.match(unknown.stderr, /Unknown option '--frends'[\s\S]*usage: npm run seed/)
})

t.test('npm run seed -- --friends gives everyone exactly that many friends, odd counts too', async (t) => {
  const url = tempDatabaseUrl(t)
  const result = seed(url, ['--people', '30', '--friends', '5', '--messages', '0'])
  t.equal(result.status, 0, result.stderr)
  t.match(result.stdout, /^seeded 30 people, 75 friendships, 0 messages/)
  const handle = createDatabase({ url })
  t.teardown(() => handle.close())
  const { people, friendships } = createRepositories(handle)
  const everyone = await people.list({ limit: 100 })
  t.same(await Promise.all(everyone.map(async ({ id }) => (await friendships.listFriends(id, 100)).length)), everyone.map(() => 5), 'five friends each')
})
