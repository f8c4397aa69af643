/**
 * A Map of at most `maxEntries`, for caches: insertion order is age order,
 * so `remember` makes room by dropping the oldest entry.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  readonly #maxEntries: number

  constructor (maxEntries: number) {
    super()
    this.#maxEntries = maxEntries
  }

  /** Sets `key` as the newest entry, dropping the oldest when the map is full. */
  remember (key: K, value: V): this {
    this.delete(key)
    if (this.size >= this.#maxEntries) this.delete(this.keys().next().value as K)
    return this.set(key, value)
  }
}
