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

  // Under both limits of a document (32,768 characters, 2,000 tokens), 22 KB
  // of 660 aliases: parsed whole, refused by validation (aliases).
  const refused = (i: number) => `query a${i} { ${Array.from({ length: 660 }, (_, k) => `alias_number_${String(k).padStart(5, '0')}: __typename`).join(' ')} }`
  const aborted = { status: 400, body: { errors: [{ message: 'Aliases limit of 30 exceeded, found 660.', extensions: { code: 'TOO_MANY_ALIASES' } }] } }
  // As dense as a valid document gets (a field asked for 20 times in a selection at most), 2 KB.
  const fields = `${'id '.repeat(20)}${'name '.repeat(20)}${'__typename '.repeat(20)}`
  const friends = (levels: number): string => levels === 0 ? '' : `friends(limit: 1) { ${fields}${friends(levels - 1)}} `
  const valid = (i: number) => `query a${i} { people(limit: 1) { ${fields}${friends(5)}} }`
  const ran = { status: 200, body: { data: { people: [] }, extensions: { cost: { requested: 6, charged: 1 } } } }

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
  t.ok(afterValid - afterRefused < 16 * MB, `160 valid documents keep ${((afterValid - afterRefused) / MB).toFixed(1)} MB, under 16 MB: the ones the budget of about 20 MB (counted generously) keeps, not all of them`)
  t.same(await post(valid(159)), ran, 'a remembered document runs the same')
})
