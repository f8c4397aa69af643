import { spawnSync } from 'node:child_process'
import t from 'tap'
import { tempDatabaseUrl } from './helper.js'
import { checkMigrateCommand, migrate, MIGRATE } from './migrate-command.js'

// One node process per command, each opening the database: slow on a busy machine.
t.setTimeout(300_000)

t.test('npm run migrate -- status, up and down on a SQLite file: down through every migration and up again', async (t) => {
  await checkMigrateCommand(t, tempDatabaseUrl(t))
})

t.test('npm run migrate explains itself, and refuses a command it does not know', async (t) => {
  const help = spawnSync(process.execPath, [MIGRATE, '--help'], { encoding: 'utf8' })
  t.equal(help.status, 0)
  t.match(help.stdout, /^usage: npm run migrate -- <command>[\s\S]*status[\s\S]*up[\s\S]*down/)
  for (const args of [[], ['sideways'], ['down', 'twice']]) {
    const result = migrate('sqlite:/nonexistent-dir/never-created.db', args)
    t.equal(result.status, 2, args.join(' '))
    t.match(result.stderr, /usage: npm run migrate/)
  }
})
