import { once } from 'node:events'
import t from 'tap'
import WebSocket from 'ws'
import type { Teardown } from '@people-service/infra/testing'
import { adminHeaders, startServerProcess } from './server-process.js'

/*
 * What one caller can make the server keep. GraphQL documents are
 * remembered by their text (packages/http/src/graphql/documents.ts); a
 * refused one used to be kept with its syntax tree, about 1 MB for a text of
 * 22 KB, so a few hundred distinct documents pinned hundreds of MB. The
 * server runs with its inspector open, so the test can collect its garbage
 * and read the heap that is left.
 */

const MB = 1024 * 1024

/** The heap the server uses after a full collection, read through its inspector. */
const heapOf = async (t: Teardown, output: () => string): Promise<() => Promise<number>> => {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(output())?.[1]
  if (url === undefined) throw new Error(`the server did not open its inspector:\n${output()}`)
  const socket = new WebSocket(url)
  t.teardown(() => socket.terminate())
  await once(socket, 'open')
  const answers = new Map<number, (result: Record<string, number>) => void>()
  socket.on('message', (data) => {
    const { id, result } = JSON.parse(String(data)) as { id?: number, result?: Record<string, number> }
    if (id !== undefined) answers.get(id)?.(result ?? {})
  })
  let sent = 0
  const call = (method: string) => new Promise<Record<string, number>>((resolve) => {
    answers.set(++sent, resolve)
    socket.send(JSON.stringify({ id: sent, method }))
  })
  return async () => {
    await call('HeapProfiler.collectGarbage')
    return (await call('Runtime.getHeapUsage')).usedSize ?? Number.NaN
  }
}

t.test('distinct documents sent by one caller keep a bounded heap, whether they are refused or valid', async (t) => {
  const server = await startServerProcess(t, {
    NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`,
    // No 503s from a busy test machine's event loop: not what is tested here.
    MAX_EVENT_LOOP_DELAY_MS: '60000'
  })
  const heap = await heapOf(t, server.output)
  const headers = { ...await adminHeaders(server.url), 'content-type': 'application/json' }
  const post = async (query: string) => {
    const response = await fetch(`${server.url}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query }) })
    return { status: response.status, body: await response.json() as unknown }
  }
  /** Sends `count` distinct documents, a few at a time, and checks every answer. */
  const flood = async (count: number, document: (i: number) => string, expected: { status: number, body: unknown }) => {
    let wrong = 0
    for (let i = 0; i < count; i += 4) {
      const answers = await Promise.all([0, 1, 2, 3].map((k) => post(document(i + k))))
      wrong += answers.filter((answer) => JSON.stringify(answer) !== JSON.stringify(expected)).length
    }
    return wrong
  }

  // Under both limits of a document (32,768 characters, 2,000 tokens);
  // graphql-js gives up on merging its 1,985 fields.
  const refused = (i: number) => `query a${i} { ${'__typename '.repeat(1985)}}`
  const aborted = { status: 400, body: { errors: [{ message: 'Validation aborted.', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } }
  // The densest valid document found: about 370 KB of heap once run, for 2,000 characters.
  const valid = (i: number) => `query a${i} { people(limit: 1) { ${'id '.repeat(650)}} }`
  const ran = { status: 200, body: { data: { people: [] }, extensions: { cost: { requested: 1, charged: 1 } } } }

  // Warmed up first: what the first requests compile and allocate once is not what is measured.
  t.equal(await flood(8, (i) => refused(1000 + i), aborted), 0)
  t.equal(await flood(8, (i) => valid(1000 + i), ran), 0)
  const before = await heap()

  t.equal(await flood(120, refused, aborted), 0, 'every one is refused, with graphql-js\' answer')
  const afterRefused = await heap()
  t.ok(afterRefused - before < 16 * MB, `120 refused documents of 22 KB keep ${((afterRefused - before) / MB).toFixed(1)} MB, under 16 MB: not their syntax trees, 1 MB each`)
  t.same(await post(refused(0)), aborted, 'a remembered refusal answers the same')

  t.equal(await flood(160, valid, ran), 0, 'each valid document runs')
  const afterValid = await heap()
  t.ok(afterValid - afterRefused < 32 * MB, `160 valid documents keep ${((afterValid - afterRefused) / MB).toFixed(1)} MB, under 32 MB: the budget of about 20, not 370 KB each`)
  t.same(await post(valid(159)), ran, 'a remembered document runs the same')
})
