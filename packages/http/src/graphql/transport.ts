/**
 * GraphQL over HTTP media types. `application/json` is the default and what
 * legacy clients get; `application/graphql-response+json` is the newer type
 * whose status codes carry meaning. Both bodies are the same JSON.
 */
export const MEDIA_TYPES = {
  json: 'application/json',
  graphqlResponse: 'application/graphql-response+json'
} as const

export type MediaType = typeof MEDIA_TYPES[keyof typeof MEDIA_TYPES]

interface Acceptable { q: number, specificity: number }

const parseAccept = (accept: string): Array<{ range: string, q: number }> =>
  accept.split(',').map((part) => {
    const [range = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase())
    const q = params.find((p) => p.startsWith('q='))
    const quality = q === undefined ? 1 : Number(q.slice(2))
    return { range, q: Number.isFinite(quality) ? quality : 0 }
  })

const acceptance = (ranges: Array<{ range: string, q: number }>, type: MediaType): Acceptable | undefined => {
  let best: Acceptable | undefined
  for (const { range, q } of ranges) {
    const specificity = range === type ? 2 : range === 'application/*' ? 1 : range === '*/*' ? 0 : -1
    // The most specific range that names the type decides its quality (RFC 9110, 12.5.1).
    if (specificity >= 0 && (best === undefined || specificity > best.specificity)) best = { q, specificity }
  }
  return best !== undefined && best.q > 0 ? best : undefined
}

/**
 * The media type to answer in, from the Accept header; undefined when the
 * client accepts neither (406). Equal preference goes to
 * application/graphql-response+json when the client named it, and to
 * application/json when only wildcards matched.
 */
export const negotiate = (accept: string | undefined): MediaType | undefined => {
  if (accept === undefined || accept.trim() === '') return MEDIA_TYPES.json
  const ranges = parseAccept(accept)
  const json = acceptance(ranges, MEDIA_TYPES.json)
  const graphqlResponse = acceptance(ranges, MEDIA_TYPES.graphqlResponse)
  if (graphqlResponse === undefined) return json && MEDIA_TYPES.json
  if (json === undefined) return MEDIA_TYPES.graphqlResponse
  if (graphqlResponse.q !== json.q) return graphqlResponse.q > json.q ? MEDIA_TYPES.graphqlResponse : MEDIA_TYPES.json
  if (graphqlResponse.specificity !== json.specificity) {
    return graphqlResponse.specificity > json.specificity ? MEDIA_TYPES.graphqlResponse : MEDIA_TYPES.json
  }
  return graphqlResponse.specificity === 2 ? MEDIA_TYPES.graphqlResponse : MEDIA_TYPES.json
}

export const contentTypeOf = (type: MediaType): string => `${type}; charset=utf-8`
