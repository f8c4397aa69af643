/** Port: where new identifiers come from. */
export interface IdGenerator {
  next(): string
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** True for a canonical, lower-case UUID; anything else can name nothing we stored. */
export const isId = (value: string): boolean => UUID.test(value)

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/*
 * Random bytes are drawn from the system a few KiB at a time: one call per
 * id, and the hex of every byte built anew, took 4 µs per id, paid on every
 * create and 16 s of seeding a million people with their messages.
 */
const POOL_BYTES = 4096
const pool = new Uint8Array(POOL_BYTES)
let poolOffset = POOL_BYTES

const randomOctets = (count: number): number => {
  if (poolOffset + count > POOL_BYTES) {
    globalThis.crypto.getRandomValues(pool)
    poolOffset = 0
  }
  const at = poolOffset
  poolOffset += count
  return at
}

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
      const time = ms.toString(16).padStart(12, '0')
      const r = randomOctets(8)
      const b = (i: number): string => HEX[pool[r + i] as number] as string
      // Version 7 over the counter; the variant's two bits over the first random byte.
      return `${time.slice(0, 8)}-${time.slice(8)}-${(0x7000 | counter).toString(16)}-` +
        `${HEX[0x80 | ((pool[r] as number) & 0x3f)] as string}${b(1)}-${b(2)}${b(3)}${b(4)}${b(5)}${b(6)}${b(7)}`
    }
  }
}
