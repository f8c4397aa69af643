import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Sets `Link: <…>; rel="next"` for the page after this one, keeping the other
 * query parameters. The query string alone is parsed (a whole URL costs four
 * times as much, on every page), and the path is the one the client asked for.
 */
export const linkNext = (request: FastifyRequest, reply: FastifyReply, next: string | undefined): void => {
  if (next === undefined) return
  const { url } = request
  const start = url.indexOf('?')
  const query = new URLSearchParams(start === -1 ? '' : url.slice(start + 1))
  query.set('cursor', next)
  reply.header('link', `<${start === -1 ? url : url.slice(0, start)}?${query.toString()}>; rel="next"`)
}
