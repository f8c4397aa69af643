import { PeopleServiceError } from './errors.js'
import type { Answer, Transport } from './transport.js'

/**
 * The target of `rel="next"` in a Link header (RFC 8288), resolved against the
 * URL that was asked for, or undefined when there is none.
 */
export const nextLink = (link: string | null, base: string): string | undefined => {
  if (link === null) return undefined
  for (const match of link.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]*)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(match[2] ?? '')
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/)
    if (relations.includes('next')) return new URL(match[1] ?? '', base).href
  }
  return undefined
}

/** The `cursor` parameter of a URL the service handed out. */
export const cursorOf = (url: string): string | undefined => new URL(url).searchParams.get('cursor') ?? undefined

/** Items one page at a time, or one by one with `for await`. */
export interface Paginated<T> extends AsyncIterable<T> {
  /** The pages as the service sends them, each with the cursor of the page after it. */
  pages(): AsyncIterableIterator<Page<T>>
}

export interface Page<T> {
  items: T[]
  /** The `cursor` of the next page; undefined on the last. */
  nextCursor: string | undefined
}

/** A query string of the parameters that are set. */
export const withQuery = (path: string, query: Record<string, string | number | boolean | undefined>): string => {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value))
  const text = search.toString()
  return text === '' ? path : `${path}?${text}`
}

const itemsOf = <T>(answer: Answer): T[] => {
  if (!Array.isArray(answer.body)) throw new PeopleServiceError(`GET ${new URL(answer.url).pathname} answered ${answer.status} without a list`, { statusCode: answer.status, code: 'INVALID_RESPONSE' })
  return answer.body as T[]
}

/**
 * Follows `Link: <…>; rel="next"` from `path` until there is none, or until a
 * page comes back empty (the events list links its last page too, so a
 * consumer keeps its place). Each page is asked for only when wanted.
 */
export const paginate = <T>(send: Transport, path: string): Paginated<T> => {
  async function * pages (): AsyncIterableIterator<Page<T>> {
    let next: string | undefined = path
    while (next !== undefined) {
      const answer: Answer = await send({ method: 'GET', path: next })
      const items = itemsOf<T>(answer)
      next = nextLink(answer.headers.get('link'), answer.url)
      if (items.length === 0 && next !== undefined) return
      yield { items, nextCursor: next === undefined ? undefined : cursorOf(next) }
    }
  }
  return {
    pages,
    async * [Symbol.asyncIterator] () {
      for await (const page of pages()) yield * page.items
    }
  }
}
