import { randomUUID } from 'node:crypto'
import { maxHeaderSize, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { errorBody } from './errors.js'
import { LIMITS } from './limits.js'

/*
 * Requests Node's HTTP parser refuses before Fastify sees them: a request
 * line and headers over Node's `maxHeaderSize` (16 KiB unless set; a query
 * string far over its limit ends up here, not in the limits hook), bytes
 * that are not HTTP, a request that took too long to arrive. Fastify's own
 * answer is 431 or 400 in a shape of its own, with none of the headers every
 * response carries. Here they get the contract's: 400 (a timeout keeps 408)
 * in the error shape, with a request id and the security headers. There is
 * no request yet to take an id from, so one is made; the connection closes,
 * since the parser cannot tell where the next request would start.
 */

interface ClientError extends Error {
  code?: string
}

const answerOf = (error: ClientError): { status: number, message: string, code: string } => {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, message: 'the request did not arrive in time', code: 'REQUEST_TIMEOUT' }
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 400,
        message: `the request line and headers are longer than ${maxHeaderSize} bytes (a query string may have at most ${LIMITS.queryStringLength} characters)`,
        code: 'REQUEST_TOO_LARGE'
      }
    default:
      return { status: 400, message: 'the request is not valid HTTP', code: 'BAD_REQUEST' }
  }
}

/** Fastify's `clientErrorHandler`, answering with `headers` (the security headers) beside its own. */
export const clientErrorHandler = (headers: ReadonlyArray<readonly [string, string]>) => {
  const constant = headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')
  return function (this: { log: FastifyBaseLogger }, error: ClientError, socket: Socket): void {
    // A reset connection has nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const { status, message, code } = answerOf(error)
    // The code only: the error holds the raw bytes received, credentials included.
    this.log.debug({ code: error.code }, 'refused a request the HTTP parser could not read')
    if (socket.writable) {
      const body = JSON.stringify(errorBody(status, message, code))
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        `content-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${randomUUID()}\r\n${constant}connection: close\r\n\r\n${body}`)
    }
    socket.destroy()
  }
}
