/**
 * Port: a value shared by every instance of a deployment that changes
 * whenever any credential is revoked — a key revoked, an account's role or
 * password changed, an account disabled or deleted. Instances cache verified
 * keys and account states and compare the value on each use, so a
 * revocation anywhere empties every cache on the next request, and open
 * WebSocket connections, checked every second, close. Reading it must be
 * cheap (memory, or one Redis GET), never a database query.
 */
export interface KeyRevocations {
  /** Opaque; only equality means anything. */
  version(): Promise<string>
  /**
   * The version when this process holds it and it can be read without
   * waiting; absent (or undefined) when it lives elsewhere. Lets a request
   * whose credential was verified since the last revocation go on without
   * a turn of the event loop.
   */
  peek?(): string | undefined
  /** Call after the revocation is stored, never before. */
  revoked(): Promise<void>
}

/** For a single instance: the value lives in this process. */
export const localKeyRevocations = (): KeyRevocations => {
  let count = 0
  let version = '0'
  return {
    async version () { return version },
    peek: () => version,
    async revoked () { version = String(++count) }
  }
}
