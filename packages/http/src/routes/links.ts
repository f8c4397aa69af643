import type { FastifyReply, FastifyRequest } from 'fastify'

/** Sets `Link: <…>; rel="next"` for the page after this one, keeping the other query parameters. */
export const linkNext = (request: FastifyRequest, reply: FastifyReply, next: string | undefined): void => {
  if (next === undefined) return
  const url = new URL(request.url, 'http://placeholder')
  url.searchParams.set('cursor', next)
  reply.header('link', `<${url.pathname}${url.search}>; rel="next"`)
}
