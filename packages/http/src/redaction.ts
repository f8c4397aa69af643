/**
 * Log paths pino must censor: credentials in request headers wherever a
 * request or its headers are logged, and passwords in any logged body.
 */
export const REDACTED_LOG_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'request.headers.authorization',
  'request.headers["x-api-key"]',
  'headers.authorization',
  'headers["x-api-key"]',
  'body.password',
  'req.body.password',
  // POST /auth/password
  'body.currentPassword',
  'body.newPassword',
  'req.body.currentPassword',
  'req.body.newPassword'
]

/**
 * Characters of a request's URL (or Host, or Accept-Version) a log line
 * keeps: anyone may send 16 KiB of them, and every request is logged, so
 * an anonymous client, never charged, wrote 15 KB of log a request.
 */
const LOGGED_LENGTH = 512

const clipped = (text: string | undefined): string | undefined =>
  text === undefined || text.length <= LOGGED_LENGTH ? text : `${text.slice(0, LOGGED_LENGTH)}… (${text.length} characters)`

/** What Fastify's request serializer reads of a request. */
interface LoggedRequest {
  method: string
  url: string
  host: string
  ip: string
  headers?: Record<string, string | string[] | undefined>
  socket?: { remotePort?: number }
}

/** How a request appears in the log: Fastify's own fields, the long ones cut at LOGGED_LENGTH. */
export const LOG_SERIALIZERS = {
  req: (request: LoggedRequest) => {
    const version = request.headers?.['accept-version']
    return {
      method: request.method,
      url: clipped(request.url),
      version: clipped(Array.isArray(version) ? version.join(', ') : version),
      host: clipped(request.host),
      remoteAddress: request.ip,
      remotePort: request.socket?.remotePort
    }
  }
}
