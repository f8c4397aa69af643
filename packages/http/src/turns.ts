/*
 * Big reads take turns with everything else. SQLite answers on the event
 * loop, so one statement for the friends of 4,000 people held it for half a
 * second, and every other caller with it. A big batch is read in chunks, and
 * each chunk waits for its turn: one chunk per turn of the event loop,
 * whoever asks, so however many big queries run at once, any other request
 * waits for at most one chunk. Small batches (the usual ones) never wait.
 */

/** Rows one chunk may read: a few ms of work on the bench data set (bench/cost.ts). */
export const CHUNK_ROWS = 500

const waiting: Array<() => void> = []
let scheduled = false

const release = (): void => {
  scheduled = false
  waiting.shift()?.()
  // Scheduled from a setImmediate callback, the next release runs on the next
  // turn of the loop, after the I/O that arrived in between.
  if (waiting.length > 0) schedule()
}

const schedule = (): void => {
  if (scheduled) return
  scheduled = true
  setImmediate(release)
}

/** Resolves on a later turn of the event loop, one waiter per turn, first come first served. */
export const takeTurn = async (): Promise<void> => new Promise((resolve) => {
  waiting.push(resolve)
  schedule()
})

/**
 * Loads the values of `keys` in chunks of at most `size` keys, each on its
 * own turn (takeTurn), one after another; keys that fit in one chunk load at
 * once, as they always did.
 */
export const inChunks = async <K, V>(keys: readonly K[], size: number, load: (chunk: readonly K[]) => Promise<Map<K, V>>): Promise<Map<K, V>> => {
  if (keys.length <= size) return load(keys)
  const loaded = new Map<K, V>()
  for (let start = 0; start < keys.length; start += size) {
    await takeTurn()
    for (const [key, value] of await load(keys.slice(start, start + size))) loaded.set(key, value)
  }
  return loaded
}
