import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { PeopleServiceClient, PeopleServiceError, type CloudEvent, type EventType } from '@people-service/client'
import type { Teardown } from '@people-service/infra/testing'
import t from 'tap'
import { collect } from './helper.js'

/*
 * events.list and events.tail against GET /events as docs/API.md ("Events")
 * defines it, served here by a stand-in that keeps to the contract: oldest
 * first, `Link: rel="next"` on every page (the last too), `?type=`,
 * `?subject=`, `?wait=` answering as soon as something newer exists, and 410
 * EVENTS_EXPIRED for a cursor past retention.
 */

interface Poll { query: URLSearchParams, at: number }

const eventsService = async (t: Teardown) => {
  const events: CloudEvent[] = []
  const polls: Poll[] = []
  const waiting = new Set<() => void>()
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stand-in')
    polls.push({ query: url.searchParams, at: Date.now() })
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': `events-${polls.length}`, ...headers })
      response.end(JSON.stringify(body))
    }
    if (url.pathname !== '/events') { send(404, { statusCode: 404, error: 'Not Found', message: 'no such route' }); return }
    if (request.headers['x-api-key'] !== 'admin-key') { send(401, { statusCode: 401, error: 'Unauthorized', message: 'credentials needed' }); return }
    const cursor = url.searchParams.get('cursor')
    if (cursor === 'expired') { send(410, { statusCode: 410, error: 'Gone', message: 'events before this cursor are no longer kept', code: 'EVENTS_EXPIRED' }); return }
    const after = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString())
    const limit = Number(url.searchParams.get('limit') ?? 100)
    const types = url.searchParams.get('type')?.split(',')
    const subject = url.searchParams.get('subject')
    const answer = () => {
      const matching = events.map((event, index) => ({ event, position: index + 1 })).slice(after)
        .filter(({ event }) => (types === undefined || types.includes(event.type)) && (subject === null || event.subject === subject))
        .slice(0, limit)
      const last = matching.at(-1)?.position ?? Math.max(after, events.length)
      const next = new URLSearchParams(url.searchParams)
      next.set('cursor', Buffer.from(String(last)).toString('base64url'))
      send(200, matching.map(({ event }) => event), { link: `</events?${next.toString()}>; rel="next"` })
    }
    const wait = Number(url.searchParams.get('wait') ?? 0)
    if (events.length > after || wait === 0) { answer(); return }
    const wake = () => { clearTimeout(timer); waiting.delete(wake); answer() }
    const timer = setTimeout(wake, wait * 1000)
    waiting.add(wake)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => {
    for (const wake of waiting) wake()
    server.closeAllConnections()
    server.close(() => resolve())
  }))
  const record = (type: EventType, subject: string) => {
    const id = `event-${events.length + 1}`
    const time = new Date().toISOString()
    events.push({ specversion: '1.0', id, source: '/people-service', type, subject, time, datacontenttype: 'application/json', actorkind: 'apikey', actorid: 'admin-key-id', data: { id: subject.split('/').at(-1) } })
    for (const wake of [...waiting]) wake()
  }
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, polls, record, client: new PeopleServiceClient({ baseUrl: url, apiKey: 'admin-key' }) }
}

/** The first item of an async iterable; the rest is never asked for. */
const firstOf = async <T>(items: AsyncIterable<T>): Promise<T | undefined> => {
  const iterator = items[Symbol.asyncIterator]()
  const first = await iterator.next()
  await iterator.return?.()
  return first.done === true ? undefined : first.value
}

t.test('events.list pages oldest first and stops at the first empty page, though every page links on', async (t) => {
  const service = await eventsService(t)
  for (let i = 1; i <= 5; i++) service.record('person.created', `/person/${i}`)
  service.record('message.sent', '/message/1')
  const people = await collect(service.client.events.list({ limit: 2, types: ['person.created', 'person.updated'] }))
  t.same(people.map((e) => e.id), ['event-1', 'event-2', 'event-3', 'event-4', 'event-5'])
  t.same(service.polls.map((p) => p.query.get('type')), Array(4).fill('person.created,person.updated'), 'the filter kept on every page')
  t.equal(service.polls.length, 4, 'three pages and the empty one after them')
  const one = await collect(service.client.events.list({ subject: '/person/3' }))
  t.same(one.map((e) => e.id), ['event-3'])
})

t.test('events.tail hands out events as they are recorded, from a cursor, over long polls', async (t) => {
  const service = await eventsService(t)
  service.record('person.created', '/person/1')
  const [first] = await collect(service.client.events.list())
  t.equal(first?.id, 'event-1')
  const start = (await firstOf(service.client.events.list().pages()))?.nextCursor

  const tail = service.client.events.tail({ after: start, wait: 5 })
  setTimeout(() => { service.record('person.updated', '/person/1'); service.record('friendship.created', '/person/1') }, 300)
  const seen: string[] = []
  const began = Date.now()
  for await (const event of tail) {
    seen.push(event.id)
    if (seen.length === 2) break
  }
  t.same(seen, ['event-2', 'event-3'], 'only what came after the cursor, in order')
  t.ok(Date.now() - began < 4_000, 'answered when the events came, not when the wait ended')
  t.equal(service.polls.at(-1)?.query.get('wait'), '5')

  // The last event handed out ended its page: resuming from the tail's cursor repeats nothing.
  service.record('person.deleted', '/person/1')
  t.equal((await firstOf(service.client.events.tail({ after: tail.cursor!, wait: 1 })))?.id, 'event-4')
})

t.test('a tail left in the middle of a page resumes before that page: at least once, never skipped', async (t) => {
  const service = await eventsService(t)
  for (let i = 1; i <= 3; i++) service.record('person.created', `/person/${i}`)
  const tail = service.client.events.tail({ wait: 1 })
  t.equal((await firstOf(tail))?.id, 'event-1')
  t.equal(tail.cursor, undefined, 'the place is still the start')
  t.same((await collect(service.client.events.list())).map((e) => e.id), ['event-1', 'event-2', 'event-3'])
})

t.test('a tail waits through empty polls and keeps its place', async (t) => {
  const service = await eventsService(t)
  const tail = service.client.events.tail({ wait: 1 })
  setTimeout(() => service.record('account.created', '/users/1'), 2_300)
  const page = await firstOf(tail.pages())
  t.same(page?.items.map((e) => e.id), ['event-1'])
  t.ok(service.polls.length >= 3, `empty polls ended by the wait came first (${service.polls.length} polls)`)
  t.ok(service.polls.slice(1).every((p) => p.query.get('cursor') !== null), 'each poll after the first asks from the cursor it was given')
})

t.test('a signal ends a tail during a poll', async (t) => {
  const service = await eventsService(t)
  const controller = new AbortController()
  const tail = service.client.events.tail({ wait: 30, signal: controller.signal })
  setTimeout(() => controller.abort(new Error('done tailing')), 200)
  const began = Date.now()
  await t.rejects(collect(tail), { message: 'done tailing' })
  t.ok(Date.now() - began < 5_000, 'at once, not after the wait')
})

t.test('a cursor past retention is 410 EVENTS_EXPIRED', async (t) => {
  const service = await eventsService(t)
  const error = await collect(service.client.events.tail({ after: 'expired' })).catch((error: unknown) => error) as PeopleServiceError
  t.type(error, PeopleServiceError)
  t.equal(error.statusCode, 410)
  t.equal(error.code, 'EVENTS_EXPIRED')
  t.equal(service.polls.length, 1, 'not retried')
})
