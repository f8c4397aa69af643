/*
 * The trace context of the work in progress, for a call that continues its
 * trace (a webhook delivery, a broker message): `traceparent` and
 * `tracestate`, or nothing when tracing is off. Kept apart from tracing.ts
 * so that asking loads no OpenTelemetry module.
 */
let current: () => Record<string, string> = () => ({})

/** The W3C trace context headers of the current span; `{}` when tracing is off or nothing is traced. */
export const traceHeaders = (): Record<string, string> => current()

/** Where traceHeaders reads from: set by startServer when tracing is on. */
export const setTraceHeaders = (source: () => Record<string, string>): void => {
  current = source
}
