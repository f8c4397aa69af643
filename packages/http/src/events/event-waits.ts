import { DomainError, type ChangeFeed } from '@people-service/domain'

export interface EventWaitLimits {
  /** Requests of one caller waiting at once (`?wait=`); one more is 429 TOO_MANY_WAITS. */
  perCaller: number
  /** Requests waiting at once on this instance, all callers together. */
  perInstance: number
  /**
   * How often a waiting request reads again though nothing was committed
   * here: what another instance commits is heard no later than this (ms).
   */
  pollMs: number
}

export const EVENT_WAIT_DEFAULTS: EventWaitLimits = { perCaller: 5, perInstance: 200, pollMs: 1000 }

const tooManyWaits = (message: string): DomainError => new DomainError('TOO_MANY_WAITS', message)

/**
 * The requests waiting for news on GET /events (`?wait=`). Each holds a
 * socket and reads again at every wake, so their number is bounded, per
 * caller and on the instance. A wait ends at the first of: an event
 * committed by this process (ChangeFeed.onCommit), a poll tick (another
 * instance's events), its deadline, the client going away, the server
 * closing.
 */
export const eventWaits = (feed: Pick<ChangeFeed, 'onCommit'>, limits: EventWaitLimits = EVENT_WAIT_DEFAULTS) => {
  const byCaller = new Map<string, number>()
  let waiting = 0
  let closing = false
  /** Goes up at every local commit: a wait that saw another value returns at once, so no wake is missed. */
  let commits = 0
  const wakers = new Set<() => void>()
  const wakeAll = (): void => { for (const wake of wakers) wake() }
  const stopListening = feed.onCommit(() => {
    commits++
    wakeAll()
  })

  return {
    /** Takes a place for `callerId`, or throws TOO_MANY_WAITS; answers how to give it back. */
    admit (callerId: string): () => void {
      const mine = byCaller.get(callerId) ?? 0
      if (mine >= limits.perCaller) throw tooManyWaits(`at most ${limits.perCaller} requests of one caller may wait for events at once`)
      if (waiting >= limits.perInstance) throw tooManyWaits('too many requests are waiting for events on this instance; try again shortly')
      byCaller.set(callerId, mine + 1)
      waiting++
      let released = false
      return () => {
        if (released) return
        released = true
        waiting--
        const left = (byCaller.get(callerId) ?? 1) - 1
        if (left === 0) byCaller.delete(callerId)
        else byCaller.set(callerId, left)
      }
    },

    /** The commit count now: pass it to `next` to hear of any commit after this moment. */
    get commits (): number { return commits },

    get waiting (): number { return waiting },

    get closing (): boolean { return closing },

    /** Resolves at the next wake after `seen` commits, by `deadline` (epoch ms) at the latest; `gone` ends it too. */
    async next (seen: number, deadline: number, gone: AbortSignal): Promise<void> {
      if (closing || gone.aborted || commits !== seen) return
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer)
          wakers.delete(done)
          gone.removeEventListener('abort', done)
          resolve()
        }
        const timer = setTimeout(done, Math.max(0, Math.min(limits.pollMs, deadline - Date.now())))
        wakers.add(done)
        gone.addEventListener('abort', done)
      })
    },

    /** Ends every wait (the server is closing) and stops listening. */
    close (): void {
      closing = true
      stopListening()
      wakeAll()
    }
  }
}

export type EventWaits = ReturnType<typeof eventWaits>
