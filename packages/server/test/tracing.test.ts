import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import t, { type Test } from 'tap'
import { skipWithoutRedis, testRedisUrl } from '@people-service/infra/testing'
import { traceHeaders } from '@people-service/server'
import { trace } from '@opentelemetry/api'
import { call, login, redisPrefix, start, tempDatabaseUrl } from './helper.js'

/*
 * Tracing through the real server: with OTEL_EXPORTER_OTLP_ENDPOINT set, the
 * spans of a GraphQL request arrive at an OTLP/HTTP receiver (a small server
 * on loopback that decodes the JSON protocol), as one tree under the
 * caller's traceparent: the request, its GraphQL operation, and the SQL
 * statements and Redis commands it made, named without any value.
 */

interface OtlpValue { stringValue?: string, intValue?: string | number, boolValue?: boolean, doubleValue?: number }
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  attributes?: Array<{ key: string, value: OtlpValue }>
}
interface OtlpExport { resourceSpans: Array<{ resource: { attributes: Array<{ key: string, value: OtlpValue }> }, scopeSpans: Array<{ spans: OtlpSpan[] }> }> }

const read = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

/** An OTLP/HTTP receiver on loopback: every span it was sent, with its service's name. */
const otlpReceiver = async (t: Test) => {
  const spans: Array<OtlpSpan & { service: string | undefined }> = []
  const contentTypes: string[] = []
  const bodies: string[] = []
  const server = createServer((request, response) => {
    read(request).then((body) => {
      contentTypes.push(`${request.method} ${request.url} ${request.headers['content-type']}`)
      bodies.push(body.toString('latin1'))
      if (request.headers['content-type'] === 'application/json') {
        for (const { resource, scopeSpans } of (JSON.parse(body.toString('utf8')) as OtlpExport).resourceSpans) {
          const service = resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue
          for (const scope of scopeSpans) for (const span of scope.spans) spans.push({ ...span, service })
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    }, () => { response.writeHead(400).end() })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, contentTypes, bodies }
}

const attribute = (span: OtlpSpan, key: string): string | number | boolean | undefined => {
  const value = span.attributes?.find((a) => a.key === key)?.value
  if (value === undefined) return undefined
  return value.stringValue ?? (value.intValue === undefined ? undefined : Number(value.intValue)) ?? value.boolValue ?? value.doubleValue
}

const SERVER = 2
const CLIENT = 3

t.test('the spans of one GraphQL request reach an OTLP receiver as one tree under the caller\'s traceparent', { skip: skipWithoutRedis }, async (t) => {
  const receiver = await otlpReceiver(t)
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '50',
    OTEL_SERVICE_NAME: 'people-service-under-test'
  }
  // The SDK reads its variables from the process, as in production.
  const saved = { ...process.env }
  Object.assign(process.env, otel)
  t.teardown(() => { for (const key of Object.keys(otel)) { if (saved[key] === undefined) Reflect.deleteProperty(process.env, key); else process.env[key] = saved[key] } })

  const server = await start(t, { ...otel, DATABASE_URL: tempDatabaseUrl(t), REDIS_URL: await testRedisUrl(), REDIS_KEY_PREFIX: await redisPrefix(t), LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' })
  const admin = await login(server.url)
  const ada = (await call(server.url, 'POST', '/person', admin, { name: 'Ada Secretname' })).json() as { id: string }
  const bob = (await call(server.url, 'POST', '/person', admin, { name: 'Bob Secretname' })).json() as { id: string }
  t.equal((await call(server.url, 'PUT', `/person/${ada.id}/friends/${bob.id}`, admin)).status, 200)

  const traceId = randomBytes(16).toString('hex')
  const callerSpan = randomBytes(8).toString('hex')
  const query = 'query Tour($id: ID!) { person(id: $id) { name friendsConnection(first: 5) { edges { node { name messages(limit: 2) { text } } } } } }'
  const answered = await call(server.url, 'POST', '/graphql', { ...admin, traceparent: `00-${traceId}-${callerSpan}-01` }, { query, variables: { id: ada.id }, operationName: 'Tour' })
  t.equal(answered.status, 200)
  t.same(answered.json().data.person.friendsConnection.edges, [{ node: { name: 'Bob Secretname', messages: [] } }])
  const requestId = answered.headers.get('x-request-id')
  t.equal((await call(server.url, 'GET', '/people?name=Secretname', admin)).status, 200)
  const searched = await call(server.url, 'GET', `/graphql?query=${encodeURIComponent('query ($n: String) { people(name: $n) { id } }')}&variables=${encodeURIComponent('{"n":"Secretname"}')}`, admin)
  t.equal(searched.status, 200)

  // What a delivery continuing the trace would send on.
  t.same(traceHeaders(), {}, 'no trace context outside traced work')
  const inside = trace.getTracer('test').startActiveSpan('delivery', (span) => { span.end(); return { headers: traceHeaders(), context: span.spanContext() } })
  t.same(inside.headers, { traceparent: `00-${inside.context.traceId}-${inside.context.spanId}-01` }, 'the current span\'s traceparent inside it')

  // Closing sends what the exporter still holds.
  await server.close()
  const ours = receiver.spans.filter((span) => span.traceId === traceId)
  t.ok(receiver.contentTypes.every((line) => line === 'POST /v1/traces application/json'), 'OTLP/HTTP JSON to /v1/traces')
  t.ok(ours.every((span) => span.service === 'people-service-under-test'), 'named by OTEL_SERVICE_NAME')

  const request = ours.find((span) => span.parentSpanId === callerSpan)
  t.ok(request, 'the request span continues the caller\'s trace, a child of its span')
  t.equal(request?.kind, SERVER)
  t.equal(attribute(request!, 'http.route'), '/graphql')
  t.equal(attribute(request!, 'http.response.status_code'), 200)
  const byId = new Map(ours.map((span) => [span.spanId, span]))
  const ancestors = (span: OtlpSpan): OtlpSpan[] => {
    const parent = span.parentSpanId === undefined ? undefined : byId.get(span.parentSpanId)
    return parent === undefined ? [] : [parent, ...ancestors(parent)]
  }
  const operation = ours.find((span) => span.name === 'graphql Tour')
  t.ok(operation, 'a span for the GraphQL operation, by its name')
  t.ok(ancestors(operation!).includes(request!), 'under the request')
  t.equal(attribute(operation!, 'graphql.operation.name'), 'Tour')
  t.equal(attribute(operation!, 'graphql.operation.type'), 'query')
  t.type(attribute(operation!, 'graphql.cost.requested'), 'number', 'with its cost')
  t.equal(attribute(operation!, 'graphql.cost.charged'), 11, 'charged for up to ten texts at 100 each')

  const statements = ours.filter((span) => attribute(span, 'db.system.name') === 'sqlite')
  t.ok(statements.length >= 3, `the person, the friends and the inboxes: ${statements.map((s) => s.name).join(', ')}`)
  t.ok(statements.every((span) => span.parentSpanId === operation!.spanId && span.kind === CLIENT), 'each statement a child of the operation')
  t.ok(statements.every((span) => /^SELECT [a-z_]+$/.test(span.name) && attribute(span, 'db.query.summary') === span.name), 'named for what they read, and no more')

  const commands = ours.filter((span) => attribute(span, 'db.system.name') === 'redis')
  t.ok(commands.length >= 1, `the rate limit's Redis commands: ${commands.map((s) => s.name).join(', ')}`)
  t.ok(commands.every((span) => ancestors(span).includes(request!)), 'under the request')

  // No value a caller sent travels with a span: not the names, the query, a
  // search, the credentials; ids only in the paths they were sent in.
  const everything = JSON.stringify(receiver.spans)
  for (const secret of ['Secretname', 'friendsConnection', admin.authorization!.slice(7)]) t.notOk(everything.includes(secret), `no span holds ${secret.slice(0, 20)}`)
  for (const id of [ada.id, bob.id]) {
    t.ok(receiver.spans.every((span) => !JSON.stringify(span).includes(id) || String(attribute(span, 'url.path')).includes(id)), 'an id only in a URL path')
  }

  const lines = server.logs.map((line) => JSON.parse(line) as { reqId?: string, trace_id?: string, msg: string })
  const requestLines = lines.filter((line) => line.reqId === requestId)
  t.same(requestLines.map((line) => line.msg), ['incoming request', 'request completed'], 'the request\'s lines')
  t.ok(requestLines.every((line) => line.trace_id === traceId), 'each carrying the trace id')
})

t.test('by default the spans go out as OTLP protobuf', async (t) => {
  const receiver = await otlpReceiver(t)
  const otel = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`, OTEL_BSP_SCHEDULE_DELAY: '50' }
  const saved = { ...process.env }
  Object.assign(process.env, otel)
  t.teardown(() => { for (const key of Object.keys(otel)) { if (saved[key] === undefined) Reflect.deleteProperty(process.env, key); else process.env[key] = saved[key] } })
  const server = await start(t, { ...otel, DATABASE_URL: tempDatabaseUrl(t), MAX_EVENT_LOOP_DELAY_MS: '0' })
  const admin = await login(server.url)
  t.equal((await call(server.url, 'POST', '/graphql', admin, { query: 'query Named { people { id } }' })).status, 200)
  await server.close()
  t.ok(receiver.contentTypes.length > 0, 'spans were sent')
  t.ok(receiver.contentTypes.every((line) => line === 'POST /custom/traces application/x-protobuf'), 'as protobuf, to the traces endpoint as given')
  t.ok(receiver.bodies.some((body) => body.includes('graphql Named')), 'the operation\'s span among them, named as its document names it')
})

t.test('without OTEL_EXPORTER_OTLP_ENDPOINT log lines carry no trace, and are those Fastify writes', async (t) => {
  const server = await start(t, { DATABASE_URL: tempDatabaseUrl(t), LOG_LEVEL: 'info', MAX_EVENT_LOOP_DELAY_MS: '0' })
  const admin = await login(server.url)
  const traceId = randomBytes(16).toString('hex')
  const answered = await call(server.url, 'POST', '/graphql', { ...admin, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` }, { query: '{ people { id } }' })
  t.equal(answered.status, 200)
  await server.close()
  t.notOk(server.logs.some((line) => line.includes('trace_id')), 'no trace ids')
  t.ok(server.logs.some((line) => line.includes('"incoming request"')), 'the usual request lines')
})
