import type { FastifyInstance } from 'fastify'
import secureJson from 'secure-json-parse'

/**
 * JSON bodies, parsed as Fastify does (prototype-poisoning keys refused),
 * except that an empty body is no body: clients commonly send
 * `Content-Type: application/json` on DELETE or PUT without one, and routes
 * that take no body should not fail for it. Routes that need a body still
 * refuse the missing one through their schema.
 */
/**
 * Nesting a body may have: the API's deepest is a person's address (2), a
 * GraphQL input inside variables a few more. V8 parses a megabyte of
 * `[[[…` in about 100 ms of one request's CPU; counted first, in one pass
 * over the text that skips strings, such a body costs a few ms.
 */
export const JSON_MAX_DEPTH = 32

const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** Whether JSON text nests deeper than `most` levels (strings skipped). */
export const nestsDeeperThan = (text: string, most: number): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === QUOTE) {
      for (i++; i < text.length && text.charCodeAt(i) !== QUOTE; i++) if (text.charCodeAt(i) === BACKSLASH) i++
    } else if (code === OPEN_OBJECT || code === OPEN_ARRAY) {
      if (++depth > most) return true
    } else if (code === CLOSE_OBJECT || code === CLOSE_ARRAY) {
      depth--
    }
  }
  return false
}

const badBody = (message: string): Error => Object.assign(new Error(message), { statusCode: 400, code: 'FST_ERR_CTP_INVALID_JSON_BODY' })

export const installJsonBody = (app: FastifyInstance): void => {
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8')
    if (text.trim() === '') return done(null, undefined)
    if (nestsDeeperThan(text, JSON_MAX_DEPTH)) return done(badBody(`the body nests deeper than ${JSON_MAX_DEPTH} levels`), undefined)
    try {
      done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }))
    } catch {
      done(badBody('the body is not valid JSON'), undefined)
    }
  })
}
