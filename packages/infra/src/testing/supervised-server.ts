import { spawn } from 'node:child_process'
import { createServer } from 'node:net'

/**
 * Runs `"$@"` (the server) and waits for it; stops it when standard input
 * closes, which happens when the process that started this script ends,
 * however it ends (done, crashed, killed); then removes `$1`, the server's
 * directory. A background job's standard input is /dev/null in sh, hence the
 * copy on descriptor 3.
 */
const SUPERVISOR = `
dir=$1; shift
exec 3<&0
"$@" </dev/null &
server=$!
{ read -r _ || true; kill -INT "$server" 2>/dev/null; } <&3 &
watcher=$!
wait "$server"
status=$?
kill "$watcher" 2>/dev/null
rm -rf "$dir"
exit "$status"
`

export interface SupervisedServer {
  /** The last lines the server printed, for error messages. */
  output(): string
  /** Resolves when the server has ended and its directory is gone. */
  readonly ended: Promise<void>
  /** Asks the server to stop (SIGINT: a fast shutdown for both PostgreSQL and Redis) and waits for the end. */
  stop(): Promise<void>
}

/** A server of the test run's own (PostgreSQL or Redis) and where to connect to it. */
export interface PrivateServer extends SupervisedServer {
  /** For PostgreSQL, its `postgres` database as its superuser. */
  url: string
}

export interface SuperviseOptions {
  /** Removed once the server has ended. */
  dir: string
  /** Run as this user and group (PostgreSQL refuses to run as root). */
  uid?: number
  gid?: number
}

/**
 * Starts a server that cannot outlive this process: even a SIGKILL of the
 * test run closes the supervisor's standard input, which stops the server
 * and removes its directory. The supervisor is in a session of its own, so a
 * Ctrl-C in the terminal reaches the test runner, not the server under it.
 * Nothing here keeps this process alive: a test file that started its own
 * server simply ends, and the server goes with it.
 */
export const superviseServer = (command: string, args: string[], options: SuperviseOptions): SupervisedServer => {
  const child = spawn('sh', ['-c', SUPERVISOR, 'supervisor', options.dir, command, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
    cwd: options.dir,
    ...(options.uid === undefined ? {} : { uid: options.uid }),
    ...(options.gid === undefined ? {} : { gid: options.gid })
  })
  let output = ''
  // Why it ended, for when it printed nothing.
  let end = ''
  const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000) }
  child.stdout.on('data', keep)
  child.stderr.on('data', keep)
  child.on('error', (error: NodeJS.ErrnoException) => { end = `${command} could not be started: ${error.code ?? ''} ${error.message}`.trim() })
  const ended = new Promise<void>((resolve) => child.on('close', (code, signal) => {
    end ||= signal === null ? `${command} exited with status ${String(code)}` : `${command} ended by ${signal}`
    resolve()
  }))
  child.unref()
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as unknown as { unref(): void }).unref()
  return {
    output: () => output.trim() === '' ? `(it printed nothing; ${end || 'still running'})` : output,
    ended,
    async stop () {
      // Awaited from here on: keep this process alive until the server is gone
      // and its output closed ('close' waits for both).
      child.ref()
      for (const stream of [child.stdout, child.stderr]) (stream as unknown as { ref(): void }).ref()
      child.stdin.end()
      await ended
    }
  }
}

/** A TCP port on 127.0.0.1 that was free a moment ago (the caller retries if it is taken meanwhile). */
export const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const server = createServer()
  server.on('error', reject)
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address() as { port: number }
    server.close(() => resolve(port))
  })
})

/**
 * Waits until `ready()` holds, polling every 100 ms; fails with the server's
 * output if it ends first or `timeoutMs` passes.
 */
export const waitUntilReady = async (name: string, server: SupervisedServer, ready: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
  let ended = false
  server.ended.then(() => { ended = true })
  const deadline = Date.now() + timeoutMs
  while (!await ready()) {
    if (ended) throw new Error(`${name} ended before it was ready:\n${server.output()}`)
    if (Date.now() > deadline) {
      await server.stop()
      throw new Error(`${name} was not ready within ${timeoutMs / 1000} s:\n${server.output()}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
