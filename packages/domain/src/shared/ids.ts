/** Port: where new identifiers come from. */
export interface IdGenerator {
  next(): string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** True for a canonical, lower-case UUID; anything else can name nothing we stored. */
export const isId = (value: string): boolean => UUID.test(value)

const hex = (bytes: Uint8Array): string =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')

/**
 * UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then randomness. Ids made
 * later sort later, which keeps primary-key b-trees append-mostly and lets
 * "ordered by id" mean "ordered by creation" for people.
 * Within one millisecond the 12-bit `rand_a` field counts up (method 1 of the
 * RFC), so ids from one generator are strictly increasing.
 */
export const uuidv7Generator = (now: () => number = Date.now): IdGenerator => {
  let lastMs = -1
  let counter = 0
  return {
    next () {
      let ms = now()
      if (ms <= lastMs) {
        counter++
        if (counter > 0xfff) { lastMs++; counter = 0 }
        ms = lastMs
      } else {
        lastMs = ms
        counter = 0
      }
      const bytes = new Uint8Array(16)
      globalThis.crypto.getRandomValues(bytes)
      const time = BigInt(ms)
      for (let i = 0; i < 6; i++) bytes[i] = Number((time >> BigInt(8 * (5 - i))) & 0xffn)
      bytes[6] = 0x70 | ((counter >> 8) & 0x0f)
      bytes[7] = counter & 0xff
      bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
      const h = hex(bytes)
      return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
    }
  }
}
