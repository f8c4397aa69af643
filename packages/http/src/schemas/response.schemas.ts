import type { TSchema } from '@sinclair/typebox'

/**
 * Every response header the service sends that a client may act on, as the
 * OpenAPI document describes it. Routes name the ones their success response
 * carries; the document adds the ones every response or every status carries
 * (plugins/openapi.ts), so no route can forget them.
 */
export const HEADERS = {
  'X-Request-Id': { type: 'string', description: 'The id of this request: the caller\'s own X-Request-Id when it is 1–128 of `[A-Za-z0-9_.:-]`, else generated. Quote it when reporting a problem.' },
  'RateLimit-Limit': { type: 'integer', description: 'Requests per window of the caller\'s budget closest to running out (the key\'s or its account\'s).' },
  'RateLimit-Remaining': { type: 'integer', description: 'Requests left in that budget\'s window.' },
  'RateLimit-Reset': { type: 'integer', description: 'Seconds until that window starts afresh.' },
  'Retry-After': { type: 'integer', description: 'Seconds to wait before trying again.' },
  'WWW-Authenticate': { type: 'string', description: 'The scheme that would be accepted: `Bearer realm="people-service"`.' },
  Allow: { type: 'string', description: 'The methods this path does offer, e.g. `POST`.' },
  Location: { type: 'string', description: 'The path of the resource just created.' },
  Link: { type: 'string', description: '`<…>; rel="next"`: the next page, with the other query parameters kept. Absent on the last page.' },
  ETag: { type: 'string', description: 'A tag of the resource as returned; it changes whenever the resource does. A person\'s is strong: send it as If-Match or If-None-Match.' },
  'Idempotent-Replayed': { type: 'string', description: '`true`: this is the stored answer to an earlier request with the same Idempotency-Key; nothing was done again.' },
  'Cache-Control': { type: 'string', description: '`no-store` on every answer to an authenticated request (what a caller is shown is theirs alone) and on those that hold a secret; a page\'s own caching rule on the pages.' },
  'Content-Encoding': { type: 'string', description: '`br` or `gzip` when the body is compressed, as Accept-Encoding allowed (documents and pages; API answers are not compressed).' },
  Vary: { type: 'string', description: '`Accept-Encoding`: the representation depends on it.' }
} as const satisfies Record<string, { type: 'string' | 'integer', description: string }>

export type HeaderName = keyof typeof HEADERS

export const headersOf = (names: readonly HeaderName[]) =>
  Object.fromEntries(names.map((name) => [name, HEADERS[name]])) as Record<HeaderName, (typeof HEADERS)[HeaderName]>

/** What the document says of one response beyond its body's schema. */
export interface ResponseDoc {
  /** One line: what this response means. */
  description: string
  /** A realistic body, shown in the docs and checked against the schema by the tests. */
  example: unknown
  /** Headers this response carries besides X-Request-Id and the rate-limit ones. */
  headers?: readonly HeaderName[]
}

const withoutId = <T extends TSchema>(schema: T): T => {
  const { $id: _id, ...rest } = schema
  return rest as T
}

/**
 * A response schema with its documentation. The schema serialises the body as
 * before (fast-json-stringify ignores the annotations); `description`,
 * `headers` and `examples` are read only when the OpenAPI document is built.
 */
export const documented = <T extends TSchema>(schema: T, { description, example, headers = [] }: ResponseDoc): T => ({
  // A registered schema is referred to, never copied: two copies of one $id fail the start.
  ...withoutId(schema),
  description,
  examples: [example],
  ...(headers.length === 0 ? {} : { headers: headersOf(headers) })
})

/**
 * A response without a body (304 Not Modified): no example to give. The
 * document shows its headers and no content.
 */
export const withoutBody = ({ description, headers = [] }: Omit<ResponseDoc, 'example'>) => ({
  type: 'null' as const,
  description,
  ...(headers.length === 0 ? {} : { headers: headersOf(headers) })
})
