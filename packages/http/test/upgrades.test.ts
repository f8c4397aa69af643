import t from 'tap'
import { rawExchange, realServer } from './helper.js'

/*
 * Upgrade requests to anything but the WebSocket at /graphql, on the real
 * server (plugins/upgrades.ts): answered over HTTP, and the socket closed
 * by the server, not left open.
 */

/** Sends one upgrade request: its status line, and whether the server closed the socket within `ms`. */
const upgrade = async (url: string, request: string, ms = 2000): Promise<{ status: string, closedByServer: boolean }> => {
  const { received, closedByServer } = await rawExchange(url, request, ms)
  return { status: received.split('\r\n')[0] ?? '', closedByServer }
}

t.test('an upgrade request to another route is answered, and its socket closed', async (t) => {
  const { url } = await realServer(t)
  const h2c = 'GET /people HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n'
  t.same(await upgrade(url, h2c), { status: 'HTTP/1.1 401 Unauthorized', closedByServer: true }, 'h2c to /people')
  const websocket = (path: string) => `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`
  t.same(await upgrade(url, websocket('/openapi.json')), { status: 'HTTP/1.1 200 OK', closedByServer: true }, 'a WebSocket to /openapi.json')
  t.same(await upgrade(url, websocket('/nowhere')), { status: 'HTTP/1.1 401 Unauthorized', closedByServer: true }, 'a WebSocket to no route (which asks for credentials first)')
})
