import { connect } from 'node:net'
import t from 'tap'
import { rawExchange, realServer } from './helper.js'

/*
 * Requests Node's HTTP parser refuses before the application sees them get
 * the contract's answer all the same: 400 in the error shape, a request id,
 * the security headers. Over a real socket: app.inject never parses HTTP.
 */

interface RawAnswer { status: number, headers: Record<string, string>, body: string }

/** Sends `bytes` on a fresh connection and reads what comes back until the server closes it. */
const exchange = async (url: string, bytes: string): Promise<RawAnswer> => {
  const { hostname, port } = new URL(url)
  const socket = connect(Number(port), hostname)
  let received = ''
  socket.on('data', (chunk) => { received += chunk.toString('latin1') })
  // The server may close while the rest of a large request is still being written.
  socket.on('error', () => {})
  await new Promise((resolve) => socket.on('connect', resolve))
  socket.write(bytes)
  await new Promise((resolve) => socket.on('close', resolve))
  const [head = '', body = ''] = received.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => {
    const colon = line.indexOf(':')
    return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]
  }))
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

t.test('a request line or headers over 16 KiB, and bytes that are not HTTP: 400 in the error shape, with a request id and the security headers', async (t) => {
  const { url, admin } = await realServer(t)
  const authorization = admin.authorization ?? ''
  const cases = [
    { name: 'a query string of 20,000 characters', bytes: `GET /people?name=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\nAuthorization: ${authorization}\r\n\r\n`, code: 'REQUEST_TOO_LARGE' },
    { name: 'a GraphQL query string of 20,000 characters', bytes: `GET /graphql?query=${encodeURIComponent(`{ __typename ${' '.repeat(20_000)}}`)} HTTP/1.1\r\nHost: x\r\n\r\n`, code: 'REQUEST_TOO_LARGE' },
    { name: 'a header of 20,000 characters', bytes: `GET /people HTTP/1.1\r\nHost: x\r\nX-Padding: ${'p'.repeat(20_000)}\r\n\r\n`, code: 'REQUEST_TOO_LARGE' },
    { name: 'not HTTP', bytes: 'HELLO THERE\r\n\r\n', code: 'BAD_REQUEST' }
  ]
  for (const { name, bytes, code } of cases) {
    const answer = await exchange(url, bytes)
    t.equal(answer.status, 400, name)
    t.match(JSON.parse(answer.body), { statusCode: 400, error: 'Bad Request', code, message: String }, name)
    t.match(answer.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${name}: a request id`)
    t.equal(answer.headers['x-content-type-options'], 'nosniff', `${name}: the security headers`)
    t.equal(answer.headers['content-type'], 'application/json; charset=utf-8', name)
    t.equal(Number(answer.headers['content-length']), Buffer.byteLength(answer.body), `${name}: the length of the body sent`)
  }
  const tooLong = await exchange(url, cases[0]!.bytes)
  t.match(JSON.parse(tooLong.body).message, /at most 4096 characters/, 'the message names the query string limit')
  t.notMatch(tooLong.body, /aaaa|Bearer/, 'nothing of the request is echoed')

  const after = await fetch(`${url}/people?name=${'a'.repeat(200)}`, { headers: admin })
  t.equal(after.status, 200, 'the server goes on answering')
})

t.test('a query string over the limit but under 16 KiB still gets the limit\'s own answer', async (t) => {
  const { url, admin } = await realServer(t)
  const response = await fetch(`${url}/people?name=${'a'.repeat(5000)}`, { headers: admin })
  t.equal(response.status, 400)
  t.match(await response.json(), { code: 'QUERY_TOO_LARGE' })
  t.ok(response.headers.get('x-request-id'))
})

t.test('a caller\'s request refused before its body is read (a query string too long, an Expect not met) answers as any other: no-store, its budget\'s headers, one request charged', async (t) => {
  const { url, admin } = await realServer(t)
  const remaining = async () => Number((await fetch(`${url}/users/me`, { headers: admin })).headers.get('ratelimit-remaining'))
  /** Over a socket: fetch refuses to send an Expect header. */
  const refusal = async (path: string, headers: string) =>
    (await rawExchange(url, `GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n${headers}\r\n`, 2000)).received
  for (const [name, path, header] of [
    ['a query string too long', `/people?name=${'a'.repeat(5000)}`, ''],
    ['an Expect not met', '/people', 'Expect: the-impossible\r\n']
  ] as const) {
    const before = await remaining()
    const answer = await refusal(path, `Authorization: ${admin.authorization}\r\n${header}`)
    t.match(answer, /^HTTP\/1\.1 400 /, name)
    t.match(answer, /\r\ncache-control: no-store\r\n/i, `${name}: no-store`)
    t.match(answer, new RegExp(`\r\nratelimit-remaining: ${before - 1}\r\n`, 'i'), `${name}: its budget's headers, the request charged`)
    t.match(await refusal(path, header), /^HTTP\/1\.1 401 /, `${name}, without credentials: 401, as for any protected path`)
  }
})

t.test('a URL whose percent-encoding does not decode: 400 BAD_URL, with a request id and the security headers', async (t) => {
  const { url, admin } = await realServer(t)
  const response = await fetch(`${url}/person/%E0%A4%A`, { headers: admin })
  t.equal(response.status, 400)
  t.match(await response.json(), { statusCode: 400, error: 'Bad Request', code: 'BAD_URL' })
  t.ok(response.headers.get('x-request-id'), 'a request id')
  t.equal(response.headers.get('x-content-type-options'), 'nosniff', 'the security headers')
})
