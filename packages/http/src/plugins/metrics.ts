import type { FastifyInstance } from 'fastify'
import fastifyMetrics from 'fastify-metrics'

export interface PoolStats {
  total: number
  idle: number
  waiting: number
}

export interface MetricsOptions {
  /** Connections of the database pool, when there is one (PostgreSQL). */
  poolStats?: () => PoolStats
}

/**
 * Prometheus text at GET /metrics: requests by route, method and status, a
 * latency histogram, the process' own figures, and the database pool.
 * Counted by route pattern (/person/:id), never by raw URL, so ids do not
 * explode the number of series.
 */
export const registerMetrics = async (app: FastifyInstance, { poolStats }: MetricsOptions): Promise<void> => {
  await app.register(fastifyMetrics.default, {
    endpoint: '/metrics',
    clearRegisterOnInit: true,
    routeMetrics: {
      routeBlacklist: ['/metrics', '/health/live', '/health/ready'],
      // The histogram gives latency quantiles at scrape time; the summary
      // would keep a t-digest per route updated on every request.
      enabled: { histogram: true, summary: false },
      overrides: { histogram: { name: 'http_request_duration_seconds', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] } }
    }
  })
  if (poolStats === undefined) return
  const { Gauge, register } = app.metrics.client
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
