/** One budget's fixed window: the units spent in it and when it ends (ms since the epoch). */
export interface BudgetWindow {
  used: number
  resetAt: number
}

/** What a charge found. Nothing is charged unless every budget could pay. */
export interface Tally {
  /** 0: both budgets paid; 1: the first could not, 2: the second could not (and neither paid). */
  refusedBy: 0 | 1 | 2
  first: BudgetWindow
  /** Undefined when only one budget was charged. */
  second: BudgetWindow | undefined
}

/**
 * Counters of spent units per budget, in fixed windows that start with a
 * budget's first unit. A charge pays `units` from one budget, or from two at
 * once (a key and its account), atomically: all of it from both, or, when
 * either has too little left, nothing from either, so a refused charge
 * consumes nothing and no budget ever goes below zero. `units = 0` reads.
 *
 * The in-process counters answer at once with a tally they reuse on the
 * next charge (read it before awaiting anything); shared ones (Redis) answer
 * a promise of a fresh one, and reject when the store cannot be reached.
 */
export interface BudgetCounters {
  charge(first: string, firstMax: number, second: string | undefined, secondMax: number, units: number): Tally | Promise<Tally>
}

/** Counters that answer at once, with a tally reused by their next charge. */
export interface ImmediateBudgetCounters extends BudgetCounters {
  charge(first: string, firstMax: number, second: string | undefined, secondMax: number, units: number): Tally
}

/** A copy of a reused tally that later charges leave alone, for reading after an await. */
export const detached = ({ refusedBy, first, second }: Tally): Tally =>
  ({ refusedBy, first: { ...first }, second: second === undefined ? undefined : { ...second } })

/**
 * Counters in this process. No allocation per charge: a budget's window is
 * made once and reset in place when it ends, and the tally is one object.
 * Ended windows are dropped once per window length, so memory follows the
 * budgets in use, not every caller ever seen.
 */
export const memoryBudgetCounters = (windowMs: number, now: () => number = Date.now): ImmediateBudgetCounters => {
  const windows = new Map<string, BudgetWindow>()
  // A budget that has not spent anything yet: read, never stored.
  const untouched: BudgetWindow = { used: 0, resetAt: 0 }
  const tally: Tally = { refusedBy: 0, first: untouched, second: undefined }
  let sweepAt = 0

  const sweep = (at: number): void => {
    for (const [name, window] of windows) if (window.resetAt <= at) windows.delete(name)
    sweepAt = at + windowMs
  }

  const windowOf = (name: string, at: number): BudgetWindow | undefined => {
    const window = windows.get(name)
    return window === undefined || window.resetAt <= at ? undefined : window
  }

  const spend = (name: string, window: BudgetWindow | undefined, units: number, at: number): BudgetWindow => {
    if (window !== undefined) {
      window.used += units
      return window
    }
    const started = windows.get(name)
    if (started === undefined) {
      const fresh = { used: units, resetAt: at + windowMs }
      windows.set(name, fresh)
      return fresh
    }
    started.used = units
    started.resetAt = at + windowMs
    return started
  }

  return {
    charge (first, firstMax, second, secondMax, units) {
      const at = now()
      if (at >= sweepAt) sweep(at)
      const one = windowOf(first, at)
      const two = second === undefined ? undefined : windowOf(second, at)
      const usedOne = one === undefined ? 0 : one.used
      const usedTwo = two === undefined ? 0 : two.used
      tally.refusedBy = usedOne + units > firstMax ? 1 : second !== undefined && usedTwo + units > secondMax ? 2 : 0
      if (tally.refusedBy === 0 && units > 0) {
        tally.first = spend(first, one, units, at)
        tally.second = second === undefined ? undefined : spend(second, two, units, at)
        return tally
      }
      untouched.resetAt = at + windowMs
      tally.first = one ?? untouched
      tally.second = second === undefined ? undefined : two ?? untouched
      return tally
    }
  }
}
