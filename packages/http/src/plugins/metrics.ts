import type { FastifyInstance, onResponseHookHandler } from 'fastify'
import fastifyMetrics from 'fastify-metrics'
import { RequestDurations, type RouteSeries } from './request-durations.js'

export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

/** The figures of webhook deliveries: attempts by outcome on this instance, and the backlog of each webhook. */
export interface WebhookStats {
  outcomes(): Readonly<Record<string, number>>
  oldestPending(): Promise<Array<{ webhookId: string, since: Date }>>
}

/** The event log (GET /events), as a scrape sees it. */
export interface EventLogFigures {
  /** The last position given: every event ever recorded. */
  lastPosition: number
  /** Events kept (recorded and not yet pruned). */
  retained: number
  /** Age of the oldest event kept, in seconds; 0 when none is. */
  oldestAgeSeconds: number
}

export interface MetricsOptions {
  /** Connections of the database pool, when there is one (PostgreSQL). */
  poolStats?: () => PoolStats
  webhooks?: WebhookStats
  /** Read at each scrape; a failure leaves the event series out of that scrape. */
  eventLog?: () => Promise<EventLogFigures>
}

// Probes and the scrape itself would drown the figures of the API.
const UNCOUNTED_ROUTES = new Set(['/metrics', '/health/live', '/health/ready'])
const UNCOUNTED_METHODS = new Set(['HEAD', 'OPTIONS', 'TRACE', 'CONNECT'])
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

/**
 * Prometheus text at GET /metrics: requests by route, method and status, a
 * latency histogram, the process' own figures, and the database pool.
 * Counted by route pattern (/person/:id), never by raw URL, so ids do not
 * explode the number of series; paths no route matches are not counted.
 *
 * Each route gets its series and an onResponse hook bound to them when it is
 * registered, so a request pays two map lookups and an addition, not a label
 * object, a timer closure and a hashed label string (fastify-metrics' route
 * metrics, which are off; it still serves the endpoint and the process
 * figures). The hook goes in before any route (installRequestDurations), the
 * endpoint after the OpenAPI document, which lists it (registerMetrics).
 */
export const installRequestDurations = (app: FastifyInstance): RequestDurations => {
  const durations = new RequestDurations('http_request_duration_seconds', 'request duration in seconds', BUCKETS)
  app.addHook('onRoute', (route) => {
    if (UNCOUNTED_ROUTES.has(route.url)) return
    // A path's 405 route takes every method the path does not offer (PROPFIND,
    // MKCOL, … some thirty): counted as one, `other`, else anyone could make
    // thirty series a path, each split by status, and every scrape longer
    // (2.9 MB and 50 ms after a few thousand anonymous requests).
    const offered = route.config?.methodNotAllowed !== true
    const byMethod = new Map<string, { label: string, series: RouteSeries }>()
    const other = { label: 'other', series: new Map() as RouteSeries }
    for (const method of [route.method].flat()) {
      if (!UNCOUNTED_METHODS.has(method)) byMethod.set(method, offered ? { label: method, series: new Map() } : other)
    }
    if (byMethod.size === 0) return
    const { url } = route
    const count: onResponseHookHandler = (request, reply, done) => {
      const counted = byMethod.get(request.method)
      // elapsedTime: from routing to the response's end, in ms.
      if (counted !== undefined) durations.observe(counted.series, counted.label, url, reply.statusCode, reply.elapsedTime / 1000)
      done()
    }
    route.onResponse = route.onResponse === undefined ? [count] : [...[route.onResponse].flat(), count]
  })
  return durations
}

export const registerMetrics = async (app: FastifyInstance, durations: RequestDurations, { poolStats, eventLog, webhooks }: MetricsOptions): Promise<void> => {
  await app.register(fastifyMetrics.default, {
    // As every GET of the service, answered to HEAD too (the plugin's own
    // route refuses it: 405); who may read it is the URL's row (policy.ts).
    // The plugin puts in its own method and handler.
    endpoint: { url: '/metrics', method: 'GET', logLevel: 'fatal', exposeHeadRoute: true, handler: () => undefined },
    clearRegisterOnInit: true,
    routeMetrics: { enabled: false }
  })
  const { Counter, Gauge, register } = app.metrics.client
  register.registerMetric(durations as never)

  if (webhooks !== undefined) {
    register.registerMetric(new Counter({
      name: 'webhook_delivery_attempts_total',
      registers: [],
      help: 'Webhook delivery attempts made by this instance, by outcome (delivered, retrying, failed, lost_lease)',
      labelNames: ['outcome'],
      // The dispatcher keeps the counts; the series shows them as they are at the scrape.
      collect () {
        this.reset()
        for (const [outcome, count] of Object.entries(webhooks.outcomes())) this.inc({ outcome }, count)
      }
    }) as never)
    register.registerMetric(new Gauge({
      name: 'webhook_oldest_pending_seconds',
      registers: [],
      help: 'Age of each webhook\'s oldest undelivered (pending) delivery, by webhook id; absent when none is pending',
      labelNames: ['webhook'],
      // A database that does not answer leaves the series out rather than failing the scrape.
      async collect () {
        this.reset()
        const now = Date.now()
        const pending = await webhooks.oldestPending().catch(() => [])
        for (const { webhookId, since } of pending) this.set({ webhook: webhookId }, Math.max(0, (now - since.getTime()) / 1000))
      }
    }) as never)
  }

  if (eventLog !== undefined) {
    // One read of the log per scrape, shared by its three series.
    let figures: Promise<EventLogFigures | undefined> | undefined
    const read = (): Promise<EventLogFigures | undefined> => (figures ??= eventLog().catch(() => undefined).finally(() => { setImmediate(() => { figures = undefined }) }))
    const gauge = (name: string, help: string, value: (f: EventLogFigures) => number) => new Gauge({
      name,
      help,
      registers: [],
      async collect () {
        const f = await read()
        if (f !== undefined) this.set(value(f))
      }
    })
    register.registerMetric(gauge('events_last_position', 'Position of the last event recorded: its rate is events per second', (f) => f.lastPosition))
    register.registerMetric(gauge('events_retained', 'Events kept in the log (recorded, not yet pruned by EVENTS_RETENTION_DAYS)', (f) => f.retained))
    register.registerMetric(gauge('events_oldest_age_seconds', 'Age of the oldest event kept: about EVENTS_RETENTION_DAYS when pruning keeps up', (f) => f.oldestAgeSeconds))
  }

  if (poolStats === undefined) return
  register.registerMetric(new Gauge({
    name: 'database_pool_connections',
    registers: [],
    help: 'Database pool connections by state',
    labelNames: ['state'],
    collect () {
      const stats = poolStats()
      this.set({ state: 'total' }, stats.total)
      this.set({ state: 'idle' }, stats.idle)
      this.set({ state: 'waiting' }, stats.waiting)
    }
  }))
}
