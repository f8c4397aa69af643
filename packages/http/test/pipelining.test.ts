import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import t from 'tap'
import { MAX_UNANSWERED } from '../src/plugins/pipelining.js'
import { rawExchange, realServer } from './helper.js'

/*
 * HTTP/1.1 pipelining on the real server (plugins/pipelining.ts): a client
 * may send requests without waiting for the answers, up to MAX_UNANSWERED
 * of them; one more destroys the connection, so a client that sends a
 * thousand and reads nothing cannot make the server hold a thousand answers.
 */

/** Writes `count` pipelined GETs of `path` at once: the answers that came back, and whether the server closed the socket within `ms`. */
const pipeline = async (url: string, path: string, count: number, ms = 3000): Promise<{ answers: number, closedByServer: boolean }> => {
  const { received, closedByServer } = await rawExchange(url, `GET ${path} HTTP/1.1\r\nHost: localhost\r\n\r\n`.repeat(count), ms)
  return { answers: received.split('HTTP/1.1 200 OK').length - 1, closedByServer }
}

t.test(`${MAX_UNANSWERED} pipelined requests are all answered on a connection that stays open`, async (t) => {
  const { url } = await realServer(t)
  t.same(await pipeline(url, '/health/live', MAX_UNANSWERED, 1000), { answers: MAX_UNANSWERED, closedByServer: false })
})

t.test('one more than that, sent before any is answered, destroys the connection', async (t) => {
  const { url } = await realServer(t)
  const { answers, closedByServer } = await pipeline(url, '/health/live', MAX_UNANSWERED + 1)
  t.ok(closedByServer, 'closed by the server')
  t.ok(answers < MAX_UNANSWERED + 1, `${answers} answered`)
})

t.test('a thousand pipelined requests for the OpenAPI document, never read: the connection goes, the server stays', async (t) => {
  const { url } = await realServer(t)
  const { closedByServer } = await pipeline(url, '/openapi.json', 1000)
  t.ok(closedByServer, 'closed by the server instead of holding a thousand copies of the document')
  const document = await fetch(`${url}/openapi.json`)
  t.equal(document.status, 200, 'and answers everyone else')
  t.equal(document.headers.get('content-type'), 'application/json; charset=utf-8')
  t.match(await document.json(), { openapi: /^3\.1/ })
})

t.test('a socket with nothing read or written for as long as a request may take is let go', async (t) => {
  // What it holds: answers a client asked for and does not read, beyond
  // what the kernel's buffers take (which leaves nothing to wait for, and
  // no answer in the process). Node destroys a socket idle that long.
  const { app } = await realServer(t, { timeouts: { headersMs: 1000, requestMs: 1500 } })
  t.equal(app.server.timeout, 1500)
  const { app: byDefault } = await realServer(t)
  t.equal(byDefault.server.timeout, 30_000)
})

t.test('an expectation the server cannot meet: 400 from the service (the contract\'s status for client errors), with its headers, and counted like any request', async (t) => {
  const { url } = await realServer(t)
  // Node would answer these itself, uncounted: a client could send them without end on one connection.
  const expecting = (value: string) => `GET /health/live HTTP/1.1\r\nHost: localhost\r\nExpect: ${value}\r\n\r\n`
  const { received, closedByServer } = await rawExchange(url, expecting('the-impossible'), 1000)
  t.notOk(closedByServer, 'the connection stays open')
  t.match(received, /^HTTP\/1\.1 400 Bad Request\r\n/)
  t.match(received, /\r\nx-request-id: \S+\r\n/i, 'with a request id')
  t.match(received, /\r\nx-content-type-options: nosniff\r\n/i, 'and the security headers')
  t.match(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)), { statusCode: 400, code: 'EXPECTATION_FAILED' })

  const flood = await rawExchange(url, expecting('x').repeat(MAX_UNANSWERED + 1), 3000)
  t.ok(flood.closedByServer, `${MAX_UNANSWERED + 1} of them pipelined: the connection goes`)

  // What Node meets itself: 100 Continue, then the request runs.
  const { hostname, port } = new URL(url)
  const continued = await new Promise<number[]>((resolve, reject) => {
    const statuses: number[] = []
    const request = httpRequest({ hostname, port, method: 'POST', path: '/auth/login', headers: { expect: '100-continue', 'content-type': 'application/json' } })
    request.on('continue', () => { statuses.push(100); request.end('{"username":"nobody","password":"wrong password here"}') })
    request.on('response', (response) => { statuses.push(response.statusCode ?? 0); response.resume(); response.on('end', () => resolve(statuses)) })
    request.on('error', reject)
  })
  t.same(continued, [100, 401], 'Expect: 100-continue is met')
})

t.test('a request answered before a body larger than any the service reads closes its connection: the body is read no further', async (t) => {
  const { url, admin } = await realServer(t)
  const { hostname, port } = new URL(url)
  /** Sends a whole body of `bytes` without credentials: the status, and whether the answer said Connection: close. */
  const flood401 = async (bytes: number) => {
    const { received } = await rawExchange(url, `POST /person HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${bytes}\r\n\r\n${' '.repeat(bytes)}`, 1000)
    return { status: received.slice(9, 12), close: /\r\nconnection: close\r\n/i.test(received) }
  }
  /** Declares a body of 100 GB and sends what it can for up to 3 s: the answer, and the bytes the server took. */
  const flood = async (headers: string) => {
    const socket = connect(Number(port), hostname)
    socket.on('error', () => {})
    await new Promise((resolve) => socket.once('connect', resolve))
    let received = ''
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => { received += chunk })
    const closed = new Promise<boolean>((resolve) => { socket.once('close', () => resolve(true)); setTimeout(() => resolve(false), 3000) })
    socket.write(`POST /person HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100000000000\r\n${headers}\r\n`)
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    let sent = 0
    const pump = (): void => {
      while (!socket.destroyed && socket.write(chunk)) sent += chunk.length
      if (!socket.destroyed) socket.once('drain', pump)
    }
    pump()
    const closedByServer = await closed
    socket.destroy()
    return { status: received.slice(9, 12), close: /\r\nconnection: close\r\n/i.test(received), closedByServer, sentMB: Math.round(sent / 1048576) }
  }
  for (const [name, headers, status] of [['no credentials', '', '401'], ['an expectation not met', `Authorization: ${admin.authorization}\r\nExpect: the-impossible\r\n`, '400']] as const) {
    const outcome = await flood(headers)
    t.equal(outcome.status, status, name)
    t.ok(outcome.close, 'Connection: close')
    t.ok(outcome.closedByServer, `closed by the server once answered (${outcome.sentMB} MB had been written)`)
  }
  // A body the service would accept is read past: closing while the client
  // still sends can reset the connection before it reads the answer.
  const megabyte = await flood401(1024 * 1024)
  t.same(megabyte, { status: '401', close: false }, 'a refused body of 1 MiB: 401, the connection kept')
  // A request whose body was read keeps its connection.
  const kept = await rawExchange(url, `POST /person HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${admin.authorization}\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{"name":"Ada"}`, 500)
  t.match(kept.received, /^HTTP\/1\.1 201/)
  t.notOk(kept.closedByServer, 'kept open')
  t.notMatch(kept.received, /\r\nconnection: close\r\n/i)
})
