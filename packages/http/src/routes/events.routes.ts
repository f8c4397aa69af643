import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { hasScope, listEvents, toCloudEvent, type Caller, type CloudEvent, type EventsPage, type ListEventsInput, type Ports } from '@people-service/domain'
import { visiblePart } from '../auth/policy.js'
import { Type } from '@sinclair/typebox'
import { EVENT_WAIT_DEFAULTS, eventWaits, type EventWaitLimits } from '../events/event-waits.js'
import { callerOf } from '../plugins/access.js'
import { errorResponses } from '../schemas/error.schema.js'
import { CloudEventSchema, EventsQuery } from '../schemas/event.schemas.js'
import { EXAMPLES } from '../schemas/examples.js'
import { documented } from '../schemas/response.schemas.js'
import { linkNext } from './links.js'

export interface EventsRouteOptions {
  ports: Pick<Ports, 'changeFeed'>
  waits?: Partial<EventWaitLimits>
}

/**
 * An event as this caller may see it: scopes govern every field whatever
 * the door, so a key with `admin` but not `people:read` learns which person
 * or message changed, not what they hold.
 */
const seenBy = (caller: Caller, event: CloudEvent): CloudEvent => {
  if (hasScope(caller, 'people:read')) return event
  if (event.type.startsWith('person.')) return { ...event, data: visiblePart(caller, 'Person', event.data) }
  if (event.type === 'message.sent') return { ...event, data: { id: event.data.id } }
  return event
}

export const eventsRoutes: FastifyPluginAsyncTypebox<EventsRouteOptions> = async (app, { ports, waits: waitLimits }) => {
  const list = listEvents(ports)
  const waits = eventWaits(ports.changeFeed, { ...EVENT_WAIT_DEFAULTS, ...waitLimits })
  // Waiting requests answer at once when the server starts closing.
  app.addHook('preClose', async () => waits.close())

  app.get('/events', {
    config: { operation: 'events.list' },
    schema: {
      operationId: 'listEvents',
      tags: ['events'],
      summary: 'Read the event log: every change, oldest first, in commit order (admins)',
      description: 'Follow `Link: <…>; rel="next"`, present on every page, even the last: a consumer that keeps the last cursor it was given sees every event exactly once, in commit order, ' +
        'whichever instance wrote it. `?wait=` (seconds, at most 30) answers as soon as something newer exists, or `[]` when the wait ends. ' +
        'Events are kept EVENTS_RETENTION_DAYS (default 30): a cursor older than that is 410 EVENTS_EXPIRED.',
      querystring: EventsQuery,
      response: {
        200: documented(Type.Array(CloudEventSchema), { description: 'A page of events, oldest first', example: EXAMPLES.events, headers: ['Link'] }),
        ...errorResponses(400, 401, 403, 410, 429)
      }
    }
  }, async (request, reply) => {
    const { limit, cursor, type, subject, wait = 0 } = request.query
    const input: ListEventsInput = {
      ...(limit === undefined ? {} : { limit }),
      ...(type === undefined ? {} : { types: type.split(',').map((t) => t.trim()) }),
      ...(subject === undefined ? {} : { subject })
    }
    const caller = callerOf(request)
    const seen = waits.commits
    let page: EventsPage = await list({ ...input, ...(cursor === undefined ? {} : { cursor }) })
    if (page.items.length === 0 && wait > 0 && !waits.closing) page = await waitFor(caller.id, wait, seen, page)
    linkNext(request, reply, page.next)
    return page.items.map((event) => seenBy(caller, toCloudEvent(event)))

    // Reads again at every wake until something comes, the wait ends, the
    // client leaves or the server closes.
    async function waitFor (callerId: string, seconds: number, commits: number, empty: EventsPage): Promise<EventsPage> {
      const release = waits.admit(callerId)
      const gone = new AbortController()
      const leave = (): void => gone.abort()
      reply.raw.once('close', leave)
      try {
        const deadline = Date.now() + seconds * 1000
        let current = empty
        let known = commits
        while (current.items.length === 0 && Date.now() < deadline && !waits.closing && !gone.signal.aborted) {
          await waits.next(known, deadline, gone.signal)
          known = waits.commits
          current = await list({ ...input, cursor: current.next })
        }
        return current
      } finally {
        reply.raw.off('close', leave)
        release()
      }
    }
  })
}
