import { FastifyOtelInstrumentation } from '@fastify/otel'
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api'
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base'
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'
import type { Tracing } from '@people-service/http'
import type { DatabaseOptions, Redis } from '@people-service/infra'
import type { FastifyInstance } from 'fastify'

/*
 * OpenTelemetry, loaded only when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set (start-server.ts imports this
 * module then, and never otherwise). Spans go out over OTLP/HTTP, protobuf
 * or JSON as OTEL_EXPORTER_OTLP_PROTOCOL says; the exporter, the batching
 * processor, the sampler and the resource read their standard OTEL_*
 * variables themselves. What is traced:
 *   - every HTTP request (@fastify/otel), a caller's W3C `traceparent` its parent;
 *   - each GraphQL operation run over HTTP (http's pipeline), with its name and cost;
 *   - each SQL statement and Redis command made for a traced request, named
 *     for what it does ("SELECT person", "EVALSHA"), never with its values.
 */

/** The OTLP/HTTP exporter for the protocol asked for: protobuf by default, as the specification says. */
const exporterFor = async (env: NodeJS.ProcessEnv): Promise<SpanExporter> => {
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || 'http/protobuf'
  if (protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
  if (protocol === 'http/protobuf') return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter()
  throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL ${protocol} is not served: use http/protobuf or http/json`)
}

// The first keyword and the first table a statement names: its span's name.
const OPERATION = /^\s*([a-z]+)/i
const TABLE = /\b(?:from|into|update|join)\s+"?([a-z_][a-z0-9_]*)/i
const SUMMARIES_KEPT = 1000

/** "SELECT person", "INSERT message": what a statement does, without any value it holds. */
const statementSummary = (() => {
  const summaries = new Map<string, string>()
  return (text: string): string => {
    let summary = summaries.get(text)
    if (summary === undefined) {
      const operation = (OPERATION.exec(text)?.[1] ?? 'SQL').toUpperCase()
      const table = TABLE.exec(text)?.[1]
      summary = table === undefined ? operation : `${operation} ${table}`
      if (summaries.size >= SUMMARIES_KEPT) summaries.clear()
      summaries.set(text, summary)
    }
    return summary
  }
})()

/** What a failure is, by its code or class: never its message, which may quote values. */
const errorType = (error: unknown): string =>
  typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? error.code : error instanceof Error ? error.name : 'error'

const fail = (span: Span, error: unknown): void => {
  span.setAttribute('error.type', errorType(error))
  span.setStatus({ code: SpanStatusCode.ERROR })
}

/** A child of the current span; none outside a traced request (background work is not traced). */
const childSpan = (tracer: Tracer, name: string, attributes: Attributes, startTime?: number): Span | undefined =>
  trace.getSpan(context.active()) === undefined
    ? undefined
    : tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes, ...(startTime === undefined ? {} : { startTime }) })

export interface ServerTracing extends Tracing {
  /** Kysely's log for the database: a span per statement of a traced request. */
  statements(system: 'sqlite' | 'postgresql'): NonNullable<DatabaseOptions['log']>
  /** A span per command this client sends for a traced request. */
  traceRedis(client: Redis): void
  /** The W3C trace context of the current span (`traceparent`, `tracestate`), for a call that continues the trace. */
  headers(): Record<string, string>
  /** Sends the spans still held. */
  shutdown(): Promise<void>
}

export const startTracing = async (env: NodeJS.ProcessEnv = process.env): Promise<ServerTracing> => {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'people-service' }))
    .merge(detectResources({ detectors: [envDetector] }))
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(await exporterFor(env))] })
  // The global provider, the async context and the W3C trace context propagator.
  provider.register()
  const tracer = provider.getTracer('people-service')
  // One span per request: the app's many hooks, and its handler, would each
  // add one to every request, for little an operator needs.
  const requests = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
    // The path alone: a query string holds what callers search for (?name=, GraphQL's variables).
    requestHook: (span, request) => { span.setAttribute('url.path', request.url.split('?', 1)[0] ?? '') }
  })
  requests.setTracerProvider(provider)

  return {
    async register (app: FastifyInstance) {
      await app.register(requests.plugin())
      // Every line a request logs carries its trace: the request's logger is
      // bound to its span as soon as there is one, and the two lines Fastify
      // would log (the first before any span) are logged here instead.
      app.addHook('onRequest', (request, reply, done) => {
        const span = request.opentelemetry().span
        if (span !== undefined && span !== null) {
          const { traceId, spanId } = span.spanContext()
          request.log = request.log.child({ trace_id: traceId, span_id: spanId })
          reply.log = request.log
        }
        request.log.info({ req: request }, 'incoming request')
        done()
      })
      app.addHook('onResponse', (_request, reply, done) => {
        reply.log.info({ res: reply, responseTime: reply.elapsedTime }, 'request completed')
        done()
      })
    },

    async inSpan (name, attributes, work) {
      return tracer.startActiveSpan(name, { attributes }, async (span) => {
        try {
          return await work({ set: (more) => { span.setAttributes(more) }, rename: (next) => { span.updateName(next) } })
        } catch (error) {
          fail(span, error)
          throw error
        } finally {
          span.end()
        }
      })
    },

    statements (system) {
      return (event) => {
        const summary = statementSummary(event.query.sql)
        const span = childSpan(tracer, summary, { 'db.system.name': system, 'db.query.summary': summary }, Date.now() - event.queryDurationMillis)
        if (span === undefined) return
        if (event.level === 'error') fail(span, event.error)
        span.end()
      }
    },

    traceRedis (client) {
      const send = client.sendCommand.bind(client)
      client.sendCommand = (command, stream) => {
        const name = command.name.toUpperCase()
        const span = childSpan(tracer, name, { 'db.system.name': 'redis', 'db.operation.name': name })
        if (span !== undefined) {
          command.promise.then(() => { span.end() }, (error: unknown) => { fail(span, error); span.end() })
        }
        return send(command, stream)
      }
    },

    headers () {
      const carrier: Record<string, string> = {}
      propagation.inject(context.active(), carrier)
      return carrier
    },

    async shutdown () {
      await provider.shutdown()
      // A later start in this process registers its own.
      trace.disable()
      context.disable()
      propagation.disable()
    }
  }
}
