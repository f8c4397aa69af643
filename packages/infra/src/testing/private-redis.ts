import { accessSync, constants, mkdtempSync } from 'node:fs'
import { connect } from 'node:net'
import { delimiter, join } from 'node:path'
import { tmpdir } from 'node:os'
import { freePort, superviseServer, waitUntilReady, type PrivateServer } from './supervised-server.js'

// Where packages put redis-server, in case PATH does not name the directory.
const USUAL_PLACES = ['/usr/local/bin', '/usr/local/sbin', '/usr/bin', '/usr/sbin', '/opt/homebrew/bin', '/opt/local/bin', '/snap/bin']

/** The redis-server program: on PATH, or where packages install it; undefined when there is none. */
export const findRedisServer = (): string | undefined => {
  const directories = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...USUAL_PLACES]
  for (const directory of directories) {
    const candidate = join(directory, 'redis-server')
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return undefined
}

/** True once the server answers PING. */
const pongs = (port: number): Promise<boolean> => new Promise((resolve) => {
  const socket = connect({ host: '127.0.0.1', port })
  let reply = ''
  const done = (ok: boolean) => { socket.destroy(); resolve(ok) }
  socket.setTimeout(1000, () => done(false))
  socket.on('error', () => done(false))
  socket.on('connect', () => socket.write('PING\r\n'))
  socket.on('data', (chunk) => {
    reply += chunk.toString()
    if (reply.includes('\r\n')) done(reply.startsWith('+PONG'))
  })
})

/**
 * A Redis server of this test run alone, from the redis-server on this
 * machine: 127.0.0.1 and a free port, keeping nothing on disk. It stops and
 * its directory goes when `stop()` is called or this process ends.
 */
export const startPrivateRedis = async (redisServer: string): Promise<PrivateServer> => {
  // A port found free may be taken before the server binds it: try another.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const dir = mkdtempSync(join(tmpdir(), 'people-service-redis-'))
    const server = superviseServer(redisServer, [
      '--bind', '127.0.0.1', '--port', String(port), '--dir', dir,
      '--save', '', '--appendonly', 'no', '--daemonize', 'no'
    ], { dir })
    try {
      await waitUntilReady('Redis', server, () => pongs(port))
      return { ...server, url: `redis://127.0.0.1:${port}` }
    } catch (error) {
      if (attempt === 3 || !server.output().includes('Address already in use')) throw error
    }
  }
}
