import { connect, type Socket } from 'node:net'
import t from 'tap'
import { realServer } from './helper.js'

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

t.test('a trusted proxy speaks for many clients: its connections are not counted per address', async (t) => {
  const { url } = await realServer(t, { connections: { perAddress: 2 }, trustProxy: ['127.0.0.1'] })
  const held = await Promise.all([1, 2, 3, 4, 5].map(() => open(url)))
  t.same(await Promise.all(held.map((c) => c.served)), [true, true, true, true, true])
  for (const c of held) c.socket.destroy()
})
