import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'
import { JSON_MAX_DEPTH, nestsTooDeep } from '../json-depth.js'

const badBody = (message: string): Error => Object.assign(new Error(message), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' })

/**
 * JSON bodies, parsed as Fastify does (prototype-poisoning keys refused),
 * except that an empty body is no body: clients commonly send
 * `Content-Type: application/json` on DELETE or PUT without one, and routes
 * that take no body should not fail for it. Routes that need a body still
 * refuse the missing one through their schema. A body nested past
 * JSON_MAX_DEPTH is refused before it is parsed.
 */
export const installJsonBody = (app: FastifyInstance): void => {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    if (nestsTooDeep(text)) return done(badBody(`the body nests deeper than ${JSON_MAX_DEPTH} levels`), undefined)
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch {
      done(badBody('the body is not valid JSON'), undefined)
    }
  })
}
