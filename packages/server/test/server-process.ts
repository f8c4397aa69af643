import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Teardown } from '@people-service/infra/testing'
import { ADMIN_PASSWORD, login } from './helper.js'

/** The command `npm start` runs once the build is done. */
export const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url))

/** Logs in as the tests' admin (helper.ts) and returns the headers that carry the token. */
export const adminHeaders = (url: string): Promise<Record<string, string>> => login(url)

export interface ServerProcess {
  child: ChildProcess
  url: string
  dataDir: string
  output(): string
  exited: Promise<number | null>
}

export interface ProcessOptions {
  /** The data folder of an earlier server: the same database. */
  dataDir?: string
  /** The process' limit of open files (through the shell's ulimit). */
  openFiles?: number
}

/**
 * Starts the real server on a free port (PORT=0) against a SQLite file in a
 * temporary folder, and resolves once it logs where it listens.
 */
export const startServerProcess = async (t: Teardown, env: Record<string, string> = {}, reuse: ProcessOptions = {}): Promise<ServerProcess> => {
  const dataDir = reuse.dataDir ?? mkdtempSync(join(tmpdir(), 'people-service-e2e-'))
  const [command, args] = reuse.openFiles === undefined
    ? [process.execPath, [MAIN]]
    : ['/bin/sh', ['-c', `ulimit -n ${reuse.openFiles} && exec "$0" "$@"`, process.execPath, MAIN]]
  const child = spawn(command, args, {
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_URL: `sqlite:${join(dataDir, 'people.db')}`, LOG_LEVEL: 'info', ADMIN_USERNAME: 'admin', ADMIN_PASSWORD, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  child.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString() })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  t.teardown(async () => {
    if (child.exitCode === null) child.kill('SIGKILL')
    await exited
    if (reuse.dataDir === undefined) rmSync(dataDir, { recursive: true, force: true })
  })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 15_000)
    const look = () => {
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match?.[1]) { clearTimeout(timer); resolve(match[1]) }
    }
    child.stdout?.on('data', look)
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`server exited:\n${output}`)) })
  })
  return { child, url, dataDir, output: () => output, exited }
}
