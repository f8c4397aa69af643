import type { FastifyInstance } from 'fastify'

/** What a span may carry: names and numbers the service chose, never a value a caller sent. */
export type SpanAttributes = Record<string, string | number | boolean>

/** A span being recorded: what its work learns on the way (an operation's cost) goes on it. */
export interface RecordingSpan {
  set(attributes: SpanAttributes): void
  /** Names the span once its work knows what it is (the operation a document holds). */
  rename(name: string): void
}

/**
 * Tracing, when it is on (the server makes one when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set; otherwise there is none, and nothing of OpenTelemetry is loaded).
 */
export interface Tracing {
  /** Instruments every request (a span each, callers' `traceparent` honoured): registered before anything else. */
  register(app: FastifyInstance): Promise<void>
  /** Runs `work` in a child span of the current one, ended when it settles. */
  inSpan<T>(name: string, attributes: SpanAttributes, work: (span: RecordingSpan) => Promise<T>): Promise<T>
}
