import { accessSync, constants, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { connect } from 'node:net'
import { delimiter, join } from 'node:path'
import { tmpdir } from 'node:os'
import { freePort, superviseServer, waitUntilReady, type PrivateServer } from './supervised-server.js'

// Where packages put nats-server, in case PATH does not name the directory.
const USUAL_PLACES = ['/usr/local/bin', '/usr/local/sbin', '/usr/bin', '/usr/sbin', '/opt/homebrew/bin', '/opt/local/bin', '/snap/bin']

/** The nats-server program: on PATH, or where packages install it; undefined when there is none. */
export const findNatsServer = (): string | undefined => {
  const directories = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...USUAL_PLACES]
  for (const directory of directories) {
    const candidate = join(directory, 'nats-server')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** True once the server greets a client with its INFO line. */
const greets = (port: number): Promise<boolean> => new Promise((resolve) => {
  const socket = connect({ host: '127.0.0.1', port })
  let reply = ''
  const done = (ok: boolean) => { socket.destroy(); resolve(ok) }
  socket.setTimeout(1000, () => done(false))
  socket.on('error', () => done(false))
  socket.on('data', (chunk) => {
    reply += chunk.toString()
    if (reply.includes('\r\n')) done(reply.startsWith('INFO '))
  })
})

/** A NATS server of the tests' own that can be stopped and started again on the same port and store. */
export interface PrivateNats extends PrivateServer {
  /** Starts it again after `stop()`, on the same port with the same JetStream store. */
  restart(): Promise<void>
  /** Stops it and removes its store. */
  remove(): Promise<void>
}

/**
 * A NATS server with JetStream of this test run alone, from the nats-server
 * on this machine: 127.0.0.1 and a free port, its store in a temporary
 * directory. The store outlives `stop()` (for `restart()`) and goes with
 * `remove()`; the server itself ends with this process.
 */
export const startPrivateNats = async (natsServer: string): Promise<PrivateNats> => {
  const root = mkdtempSync(join(tmpdir(), 'people-service-nats-'))
  const store = join(root, 'store')
  mkdirSync(store)
  // The supervisor removes only its run directory; the store goes when this process ends.
  process.once('exit', () => rmSync(root, { recursive: true, force: true }))
  const start = async (port: number) => {
    // The supervisor removes its own directory at the end, never the store beside it.
    const dir = mkdtempSync(join(root, 'run-'))
    const server = superviseServer(natsServer, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { dir })
    await waitUntilReady('NATS', server, () => greets(port))
    return server
  }
  // A port found free may be taken before the server binds it: try another.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    let current
    try {
      current = await start(port)
    } catch (error) {
      if (attempt === 3) {
        rmSync(root, { recursive: true, force: true })
        throw error
      }
      continue
    }
    let server = current
    return {
      url: `nats://127.0.0.1:${port}`,
      output: () => server.output(),
      get ended () { return server.ended },
      stop: () => server.stop(),
      async restart () { server = await start(port) },
      async remove () {
        await server.stop()
        rmSync(root, { recursive: true, force: true })
      }
    }
  }
}
