/*
 * The few platform types the client's public surface names, written out here
 * so that a program using the client compiles without DOM or Node typings.
 */

/** What the client reads of a fetch response. */
export interface FetchResponse {
  readonly status: number
  readonly headers: { get(name: string): string | null }
  text(): Promise<string>
}

/** What the client passes to fetch. */
export interface FetchInit {
  method: string
  headers: Record<string, string>
  body?: string
  signal?: AbortSignalLike
}

/** The platform's `fetch`, or any function that behaves as it does for these calls. */
export type Fetch = (url: string, init: FetchInit) => Promise<FetchResponse>

/** An `AbortSignal`, as far as the client uses one. */
export interface AbortSignalLike {
  readonly aborted: boolean
  readonly reason?: unknown
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener(type: 'abort', listener: () => void): void
}
