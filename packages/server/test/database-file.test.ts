import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { migrate } from './migrate-command.js'
import { MAIN, startServerProcess } from './server-process.js'

/*
 * A SQLite file that cannot be opened is a DATABASE_URL to change: the start
 * names the variable, the path and the cause, and exits 2, as for any other
 * setting that cannot be used (README, "Configuration").
 */

const start = (databaseUrl: string, env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [MAIN], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: databaseUrl, ...env },
    encoding: 'utf8',
    timeout: 20_000
  })

const folder = (t: Test): string => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-database-file-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * Makes a file or folder unwritable for this process. Permissions stop
 * everyone but root; for root, the immutable flag (Linux chattr, macOS chflags).
 */
const lockAgainstWrites = (t: Test, path: string, mode: number): void => {
  if (process.getuid?.() !== 0) {
    chmodSync(path, mode)
    t.teardown(() => chmodSync(path, 0o700))
  } else if (process.platform === 'darwin') {
    execFileSync('chflags', ['uchg', path])
    t.teardown(() => execFileSync('chflags', ['nouchg', path]))
  } else {
    execFileSync('chattr', ['+i', path])
    t.teardown(() => execFileSync('chattr', ['-i', path]))
  }
}

const refused = (t: Test, result: ReturnType<typeof start>, path: string, cause: RegExp) => {
  t.equal(result.status, 2, 'exit code 2')
  const quoted = path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
  t.match(result.stderr, new RegExp(`^configuration error: DATABASE_URL \\(sqlite:${quoted}\\): the database file ${quoted} cannot be opened: `), 'names the variable and the path')
  t.match(result.stderr, cause, 'and the cause')
  t.notMatch(result.stderr, /^\s+at /m, 'no stack trace')
}

t.test('a file inside a file system that makes no files (/proc; on macOS, a folder at the root of a read-only system volume)', async (t) => {
  refused(t, start('sqlite:/proc/people.db'), '/proc/people.db',
    process.platform === 'linux' ? /no file can be created in \/proc/ : /(EACCES|EROFS|EPERM).*\/proc/)
})

t.test('a file below another file (sqlite:/etc/passwd/people.db)', async (t) => {
  const path = join(MAIN, 'people.db')
  refused(t, start(`sqlite:${path}`), path, /main\.js is a file, not a folder\n$/)
  const deeper = join(MAIN, 'a', 'b', 'people.db')
  refused(t, start(`sqlite:${deeper}`), deeper, /main\.js is a file, not a folder\n$/)
})

t.test('a folder where the file should be', async (t) => {
  const dir = folder(t)
  refused(t, start(`sqlite:${dir}`), dir, /it is a folder\n$/)
})

t.test('a read-only database file', async (t) => {
  const dir = folder(t)
  const path = join(dir, 'people.db')
  writeFileSync(path, '')
  lockAgainstWrites(t, path, 0o444)
  refused(t, start(`sqlite:${path}`), path, /(EACCES|EPERM).*people\.db/)
})

t.test('a folder the service cannot write in: neither a new file nor a new folder under it', async (t) => {
  const dir = folder(t)
  const locked = join(dir, 'locked')
  mkdirSync(locked)
  lockAgainstWrites(t, locked, 0o555)
  for (const path of [join(locked, 'people.db'), join(locked, 'data', 'people.db')]) {
    refused(t, start(`sqlite:${path}`), path, /(EACCES|EPERM)/)
  }
})

t.test('npm run migrate and npm run seed say the same, with the same exit code', async (t) => {
  const path = join(MAIN, 'people.db')
  const result = migrate(`sqlite:${path}`, ['status'])
  t.equal(result.status, 2)
  t.match(result.stderr, /^configuration error: DATABASE_URL \(sqlite:.*main\.js\/people\.db\): .*main\.js is a file, not a folder\n$/)
  const seed = spawnSync(process.execPath, [MAIN.replace(/main\.js$/, 'seed.js'), '--people', '1'], {
    env: { ...process.env, DATABASE_URL: `sqlite:${path}` }, encoding: 'utf8', timeout: 20_000
  })
  t.equal(seed.status, 2)
  t.match(seed.stderr, /^configuration error: DATABASE_URL \(sqlite:.*main\.js\/people\.db\): .*main\.js is a file, not a folder\n$/)
})

t.test('a start that finds its port taken closes the database: no -wal or -shm stay behind', async (t) => {
  const running = await startServerProcess(t)
  const dir = folder(t)
  const path = join(dir, 'people.db')
  const result = start(`sqlite:${path}`, { PORT: new URL(running.url).port })
  t.equal(result.status, 1)
  t.match(result.stderr, /^could not start: .*EADDRINUSE/)
  t.ok(existsSync(path), 'the database was made (and migrated) before the port was tried')
  t.notOk(existsSync(`${path}-wal`), 'no -wal')
  t.notOk(existsSync(`${path}-shm`), 'no -shm')
})
