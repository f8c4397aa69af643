import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { overJsonLimits } from '../json-depth.js'

const CHARSET = /;\s*charset\s*=\s*"?([^";\s]+)/i
const UTF8 = /^utf-?8$/i

const badBody = (message: string): Error => Object.assign(new Error(message), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' })

/**
 * JSON bodies, parsed as Fastify does (prototype-poisoning keys refused),
 * except that an empty body is no body: clients commonly send
 * `Content-Type: application/json` on DELETE or PUT without one, and routes
 * that take no body should not fail for it. Routes that need a body still
 * refuse the missing one through their schema. A body nested past
 * JSON_MAX_DEPTH, or holding more than JSON_MAX_VALUES values, is refused
 * before it is parsed.
 */
export const installJsonBody = (app: FastifyInstance): void => {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  // Bytes, not a string: decoding as Fastify does replaces bytes that are
  // not UTF-8 with U+FFFD, so a name sent as `a\xFF\xFEb` was stored as
  // something else than was sent, where the JSON escape of a lone
  // surrogate is refused. JSON is UTF-8 (RFC 8259): no other charset.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = CHARSET.exec(request.headers['content-type'] ?? '')?.[1]
    if (charset !== undefined && !UTF8.test(charset)) return done(badBody('a JSON body is UTF-8: no other charset'), undefined)
    const bytes = typeof body === 'string' ? Buffer.from(body) : body
    if (!isUtf8(bytes)) return done(badBody('the body is not UTF-8 text'), undefined)
    const text = bytes.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    const over = overJsonLimits(text)
    if (over !== undefined) return done(badBody(`the body ${over}`), undefined)
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch {
      done(badBody('the body is not valid JSON'), undefined)
    }
  })
}
