import { AsyncLocalStorage } from 'node:async_hooks'
import type { PasswordHasher } from '@people-service/domain'
import { RateLimitedError } from './rate-limits.js'

/*
 * Password hashing (scrypt, ~0.3 s of a core each) on a bounded queue with
 * a turn per caller. A caller is an account (its keys included) or, for a
 * login, the client address. At most `concurrency` hashes run at once;
 * waiting ones are served one caller at a time in rotation, so a caller
 * with many requests waits behind their own. A caller may have `perCaller`
 * hashes running or waiting, and `maxWaiting` may wait in all: past either,
 * 429 at once rather than a queue that grows. An admitted hash therefore
 * waits at most maxWaiting / concurrency hash times (0.9 s with the
 * defaults) whatever others send: no caller pushes another's login past
 * 1.5 s.
 */

export interface HashingSettings {
  /** Hashes at once: the cores a deployment gives hashing (libuv runs them on its thread pool). */
  concurrency: number
  /** Hashes one caller may have running or waiting. */
  perCaller: number
  /** Hashes waiting in all, behind those running. */
  maxWaiting: number
}

export const HASHING_DEFAULTS: HashingSettings = { concurrency: 2, perCaller: 2, maxWaiting: 6 }

const turnOf = new AsyncLocalStorage<string>()

/** Runs `work` (and everything it awaits) as `caller`'s, for the turns of the hashes it asks for. */
export const asCaller = <T>(caller: string, work: () => T): T => turnOf.run(caller, work)

// Work outside any request (the start, a command) shares one turn, and
// waits for it rather than being refused: no caller sent it.
const NOBODY = ''

export const hashingTurns = (inner: PasswordHasher, settings: HashingSettings = HASHING_DEFAULTS): PasswordHasher => {
  let running = 0
  let waiting = 0
  // caller -> their waiting starts, oldest first; Map order is the rotation.
  const queues = new Map<string, Array<() => void>>()
  const held = new Map<string, number>()

  const next = (): void => {
    while (running < settings.concurrency && queues.size > 0) {
      const [caller, queue] = queues.entries().next().value as [string, Array<() => void>]
      queues.delete(caller)
      const start = queue.shift()!
      // Back to the end of the rotation with what is left.
      if (queue.length > 0) queues.set(caller, queue)
      waiting--
      running++
      start()
    }
  }

  const inTurn = async <T>(work: () => Promise<T>): Promise<T> => {
    const caller = turnOf.getStore() ?? NOBODY
    const mine = held.get(caller) ?? 0
    if (caller !== NOBODY && (mine >= settings.perCaller || (running >= settings.concurrency && waiting >= settings.maxWaiting))) {
      throw new RateLimitedError('too many password checks at once; retry in 1 s', 1)
    }
    held.set(caller, mine + 1)
    try {
      if (running >= settings.concurrency) {
        waiting++
        await new Promise<void>((resolve) => {
          const queue = queues.get(caller)
          if (queue === undefined) queues.set(caller, [resolve])
          else queue.push(resolve)
        })
      } else {
        running++
      }
      try {
        return await work()
      } finally {
        running--
        next()
      }
    } finally {
      const left = (held.get(caller) ?? 1) - 1
      if (left === 0) held.delete(caller)
      else held.set(caller, left)
    }
  }

  return {
    hash: (password) => inTurn(() => inner.hash(password)),
    verify: (password, hash) => inTurn(() => inner.verify(password, hash)),
    decoyHash: inner.decoyHash
  }
}
