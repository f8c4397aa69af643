import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { ADMIN_PASSWORD, call, login, start, tempDatabaseUrl } from './helper.js'

// One node process per command (real scrypt in the command): slow on a busy machine.
t.setTimeout(300_000)

const ADMIN = fileURLToPath(new URL('../dist/admin.js', import.meta.url))

const admin = (databaseUrl: string, args: string[]) => {
  const result = spawnSync(process.execPath, [ADMIN, ...args], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8', timeout: 60_000 })
  return { status: result.status, stdout: result.stdout, stderr: result.stderr }
}

t.test('a deleted bootstrap admin stays deleted at restart, and npm run admin -- recover brings an admin back', async (t) => {
  const DATABASE_URL = tempDatabaseUrl(t)
  const first = await start(t, { DATABASE_URL, MAX_EVENT_LOOP_DELAY_MS: '0' })
  const bootstrap = await login(first.url)
  t.equal((await call(first.url, 'POST', '/users', bootstrap, { username: 'alice', password: 'alice has a long passphrase', role: 'admin' })).status, 201)
  const alice = await login(first.url, 'alice', 'alice has a long passphrase')
  const { id } = (await call(first.url, 'GET', '/users/me', bootstrap)).json()
  t.equal((await call(first.url, 'DELETE', `/users/${id}`, alice)).status, 200, 'alice deletes the bootstrap admin')
  await first.close()

  const second = await start(t, { DATABASE_URL, LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' })
  const attempt = await call(second.url, 'POST', '/auth/login', {}, { username: 'admin', password: ADMIN_PASSWORD })
  t.equal(attempt.status, 401, 'the environment password opens nothing: the account is not made again')
  t.match(second.logs.find((line) => line.includes('ADMIN_PASSWORD is set but ignored')), /accounts exist/, 'the start log says why')
  t.notOk(second.logs.some((line) => line.includes('created the admin account')))
  // alice is disabled by another admin that then goes too: no admin can log in.
  t.equal((await call(second.url, 'PATCH', `/users/${(await call(second.url, 'GET', '/users/me', alice)).json().id}`, alice, { disabled: true })).status, 409, 'the last enabled admin stays (LAST_ADMIN)')
  await second.close()

  const listed = admin(DATABASE_URL, ['list'])
  t.equal(listed.status, 0, listed.stderr)
  t.match(listed.stdout, /^alice {2}enabled {2}\S+\n$/, 'the admins, one a line')
  const recovered = admin(DATABASE_URL, ['recover', 'carol'])
  t.equal(recovered.status, 0, recovered.stderr)
  const password = /with the password (\S+) \(shown only this once\)/.exec(recovered.stdout)?.[1]
  t.ok(password, recovered.stdout)
  const again = admin(DATABASE_URL, ['recover', 'alice'])
  t.match(again.stdout, /the account "alice" is an enabled admin again, with the password \S+/)
  const alicePassword = /with the password (\S+) /.exec(again.stdout)![1]!

  const third = await start(t, { DATABASE_URL, MAX_EVENT_LOOP_DELAY_MS: '0' })
  const carol = await login(third.url, 'carol', password)
  t.match((await call(third.url, 'GET', '/users/me', carol)).json(), { username: 'carol', role: 'admin', disabled: false })
  t.equal((await call(third.url, 'GET', '/users/me', alice)).status, 401, 'alice\'s tokens from before the recovery stop working')
  t.equal((await call(third.url, 'POST', '/auth/login', {}, { username: 'alice', password: 'alice has a long passphrase' })).status, 401, 'and so does her old password')
  t.ok(await login(third.url, 'alice', alicePassword))
})

t.test('npm run admin explains itself, and refuses what it cannot make sense of', async (t) => {
  const help = admin('sqlite:/nonexistent-dir/never.db', ['--help'])
  t.equal(help.status, 0)
  t.match(help.stdout, /^usage: npm run admin -- <command>[\s\S]*list[\s\S]*recover <username>/)
  for (const args of [[], ['promote'], ['recover'], ['list', 'everyone']]) {
    const result = admin('sqlite:/nonexistent-dir/never.db', args)
    t.equal(result.status, 2, args.join(' '))
    t.match(result.stderr, /usage: npm run admin/)
  }
})
