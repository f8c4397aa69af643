import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Teardown } from '@people-service/infra/testing'

/** What the proxy does with one request. */
export type Fault =
  | 'forward'
  /** The connection is cut before the service sees the request. */
  | 'cut-before'
  /** The service answers, then the connection is cut before the answer reaches the client. */
  | 'cut-after'
  /** The service answers, and the answer is held back until the client gives up. */
  | 'hold-after'
  /** The proxy answers itself, as a service refusing the request would. */
  | { status: number, retryAfter?: string, code?: string }

export interface Seen {
  method: string
  path: string
  headers: IncomingHttpHeaders
  body: string
  /** The service's status, when the request reached it. */
  upstreamStatus?: number
}

/** Headers that belong to one connection, not to the message. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'content-encoding', 'host'])

/**
 * An HTTP proxy in front of the real service that does to each request what
 * `plan` says, and records what it saw; closed when the test ends.
 */
export const flakyProxy = async (t: Teardown, target: string, plan: (request: Seen, index: number) => Fault): Promise<{ url: string, seen: Seen[] }> => {
  const seen: Seen[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry: Seen = { method: request.method ?? 'GET', path: request.url ?? '/', headers: request.headers, body: Buffer.concat(chunks).toString() }
      seen.push(entry)
      const fault = plan(entry, seen.length - 1)
      if (fault === 'cut-before') { request.socket.destroy(); return }
      if (typeof fault === 'object') {
        const reason = fault.status === 503 ? 'Service Unavailable' : fault.status === 429 ? 'Too Many Requests' : 'Conflict'
        response.writeHead(fault.status, { 'content-type': 'application/json', 'x-request-id': `proxy-${seen.length}`, ...(fault.retryAfter === undefined ? {} : { 'retry-after': fault.retryAfter }) })
        response.end(JSON.stringify({ statusCode: fault.status, error: reason, message: 'try again shortly', ...(fault.code === undefined ? {} : { code: fault.code }) }))
        return
      }
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !HOP_BY_HOP.has(name))) as Record<string, string>
      fetch(`${target}${entry.path}`, { method: entry.method, headers, ...(entry.body === '' ? {} : { body: entry.body }) }).then(async (upstream) => {
        const text = await upstream.text()
        entry.upstreamStatus = upstream.status
        if (fault === 'cut-after') { request.socket.destroy(); return }
        if (fault === 'hold-after') return
        response.writeHead(upstream.status, Object.fromEntries([...upstream.headers].filter(([name]) => !HOP_BY_HOP.has(name))))
        response.end(text)
      }, () => request.socket.destroy())
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}
