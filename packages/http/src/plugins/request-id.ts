import { randomUUID } from 'node:crypto'
import type { IncomingMessage } from 'node:http'

// A caller's id is echoed into logs and headers: keep it short and plain.
const ACCEPTABLE = /^[\w.:-]{1,128}$/

/** Takes the caller's X-Request-Id when it is sensible, else makes one. */
export const requestIdOf = (request: IncomingMessage): string => {
  const given = request.headers['x-request-id']
  return typeof given === 'string' && ACCEPTABLE.test(given) ? given : randomUUID()
}
