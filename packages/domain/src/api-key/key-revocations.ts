/**
 * Port: a value shared by every instance of a deployment that changes
 * whenever any credential is revoked — a key revoked, an account's role or
 * password changed, an account disabled or deleted. Instances cache verified
 * keys and account states and compare the value on each use, so a
 * revocation anywhere empties every cache on the next request; open
 * WebSocket connections check their credentials again when it changes. Reading it must be cheap (memory, or one Redis GET), never a
 * database query.
 */
export interface KeyRevocations {
  /** Opaque; only equality means anything. */
  version(): Promise<string>
  /** Call after the revocation is stored, never before. */
  revoked(): Promise<void>
}

/** For a single instance: the value lives in this process. */
export const localKeyRevocations = (): KeyRevocations => {
  let version = 0
  return {
    async version () { return String(version) },
    async revoked () { version++ }
  }
}
