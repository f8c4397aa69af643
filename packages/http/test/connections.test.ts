import { readdirSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import t from 'tap'
import { rawExchange, realServer } from './helper.js'

/*
 * Connections at once (plugins/connections.ts), on the real server: in all,
 * and from one client address, so that no client can take every file the
 * process may open. A connection past either limit is closed as it comes.
 */

interface Opened { socket: Socket, served: Promise<boolean> }

/** Opens a connection and asks for /health/live on it, keeping it open: whether it was answered. */
const open = async (url: string): Promise<Opened> => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.on('error', () => {})
  let received = ''
  socket.setEncoding('latin1')
  const served = new Promise<boolean>((resolve) => {
    socket.on('data', (chunk: string) => { received += chunk; if (received.includes('\r\n\r\n')) resolve(received.startsWith('HTTP/1.1 200')) })
    socket.once('close', () => resolve(false))
  })
  await new Promise((resolve) => { socket.once('connect', resolve); socket.once('close', resolve) })
  socket.write('GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n')
  await served
  return { socket, served }
}

const closed = (socket: Socket): Promise<void> =>
  new Promise((resolve) => { if (socket.destroyed) resolve(); else socket.once('close', () => resolve()) })

t.test('one client address may hold so many connections; one more is closed unanswered, and the slot comes back when one closes', async (t) => {
  const { url } = await realServer(t, { connections: { perAddress: 3 } })
  const held = await Promise.all([1, 2, 3].map(() => open(url)))
  t.same(await Promise.all(held.map((c) => c.served)), [true, true, true], 'three served and kept open')
  const fourth = await open(url)
  t.equal(await fourth.served, false, 'the fourth closed unanswered')
  held[0]!.socket.destroy()
  await closed(held[0]!.socket)
  // The server sees the close on its side a moment later.
  await new Promise((resolve) => setTimeout(resolve, 100))
  const again = await open(url)
  t.equal(await again.served, true, 'once one closed, another is served')
  for (const c of [...held, again]) c.socket.destroy()
})

t.test('the server holds so many connections in all, whoever opens them', async (t) => {
  const { url, app } = await realServer(t, { connections: { max: 4, perAddress: 0 } })
  const held = await Promise.all([1, 2, 3, 4].map(() => open(url)))
  t.same(await Promise.all(held.map((c) => c.served)), [true, true, true, true])
  t.equal(await (await open(url)).served, false, 'the fifth closed unanswered')
  t.equal(app.server.maxConnections, 4)
  for (const c of held) c.socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.equal((await fetch(`${url}/health/live`)).status, 200, 'and serves again once they go')
})

t.test('one address holds at most a quarter of all the server holds, whatever its own limit', async (t) => {
  const { url } = await realServer(t, { connections: { max: 8, perAddress: 256 } })
  const held = await Promise.all([1, 2, 3].map(() => open(url)))
  t.equal((await Promise.all(held.map((c) => c.served))).filter(Boolean).length, 2, 'two of eight, the third closed')
  for (const c of held) c.socket.destroy()
})

t.test('a trusted proxy speaks for many clients: its connections are not counted per address', async (t) => {
  const { url } = await realServer(t, { connections: { perAddress: 2 }, trustProxy: ['127.0.0.1'] })
  const held = await Promise.all([1, 2, 3, 4, 5].map(() => open(url)))
  t.same(await Promise.all(held.map((c) => c.served)), [true, true, true, true, true])
  for (const c of held) c.socket.destroy()
})

t.test('a connection holds one file, however many pipelined requests for the documentation\'s files it leaves unread', { skip: process.platform !== 'linux' && 'counts /proc/self/fd' }, async (t) => {
  // A read stream per request had held a file until its answer was taken:
  // 250 such connections from one address took a server's every file, and
  // it shut down (EMFILE).
  const { url } = await realServer(t)
  const files = () => readdirSync('/proc/self/fd').length
  const before = files()
  const { hostname, port } = new URL(url)
  // By its name, and by names that are not quite it: those had gone on to
  // @fastify/static, which read them from disk, a file a request.
  const paths = ['swagger-ui-bundle.js', './swagger-ui-bundle.js', '%2e/swagger-ui-bundle.js', 'x/../swagger-ui-bundle.js']
  const sockets = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write(`GET /docs/static/${paths[i % paths.length]!} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(16))
    socket.pause()
    return socket
  }))
  await new Promise((resolve) => setTimeout(resolve, 500))
  const held = files() - before
  // Both ends of each connection are in this process: 40.
  t.ok(held <= 45, `${held} more files for 20 connections of 16 unread answers`)
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => setTimeout(resolve, 500))
  // Files of answers never taken had stayed open for good once their client left.
  t.ok(files() - before <= 5, `${files() - before} more once they have gone`)
  const page = await fetch(`${url}/docs/static/swagger-ui.css`)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/css/)
  const etag = page.headers.get('etag')!
  for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
    t.equal((await fetch(`${url}/docs/static/swagger-ui.css`, { headers: { 'if-none-match': ifNoneMatch } })).status, 304, `its ETag saves the transfer (${ifNoneMatch})`)
  }
  t.equal((await fetch(`${url}/docs/static/swagger-ui.css`, { headers: { 'if-none-match': '"other"' } })).status, 200, 'another tag gets the file')
  t.equal((await fetch(`${url}/docs/static/no-such-file.js`)).status, 404)
  // As sent (fetch would resolve the dot).
  const almost = await rawExchange(url, 'GET /docs/static/%2e/swagger-ui.css HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n', 2000)
  t.match(almost.received, /^HTTP\/1\.1 404 /, 'nor a name that is not quite one')
})
