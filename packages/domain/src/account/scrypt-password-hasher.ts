import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto'
import type { PasswordHasher } from './password-hasher.js'

export interface ScryptParameters {
  /** CPU/memory cost, a power of two. */
  N: number
  /** Block size. */
  r: number
  /** Parallelisation. */
  p: number
}

/**
 * N = 2^15, r = 8, p = 3: 32 MiB of memory per hash (128 · N · r bytes) and
 * about 0.3 s on one core of the 2-core reference machine. OWASP's password
 * storage cheat sheet lists this as equivalent to its floor of N = 2^17,
 * r = 8, p = 1 while needing a quarter of the memory, which matters when
 * four hashes (libuv's thread pool) run at once during a login burst.
 * Parameters are stored in every hash, so raising them later keeps old
 * hashes verifiable.
 */
export const DEFAULT_SCRYPT: ScryptParameters = { N: 2 ** 15, r: 8, p: 3 }

const SALT_BYTES = 16
const KEY_BYTES = 64

const derive = (password: string, salt: Buffer, { N, r, p }: ScryptParameters): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    // maxmem must exceed 128 · N · r or Node refuses; leave headroom.
    const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }
    scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (error, key) => (error ? reject(error) : resolve(key)))
  })

// PHC string format: $scrypt$ln=15,r=8,p=3$<salt>$<hash>, both base64 without padding.
const encode = ({ N, r, p }: ScryptParameters, salt: Buffer, key: Buffer): string =>
  `$scrypt$ln=${Math.log2(N)},r=${r},p=${p}$${salt.toString('base64url')}$${key.toString('base64url')}`

const PHC = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,3}),p=(\d{1,3})\$([\w-]+)\$([\w-]+)$/

const decode = (hash: string): { params: ScryptParameters, salt: Buffer, key: Buffer } | undefined => {
  const match = PHC.exec(hash)
  if (match === null) return undefined
  const [, ln, r, p, salt, key] = match
  return { params: { N: 2 ** Number(ln), r: Number(r), p: Number(p) }, salt: Buffer.from(salt!, 'base64url'), key: Buffer.from(key!, 'base64url') }
}

export const scryptPasswordHasher = (params: ScryptParameters = DEFAULT_SCRYPT): PasswordHasher => ({
  async hash (password) {
    const salt = randomBytes(SALT_BYTES)
    return encode(params, salt, await derive(password, salt, params))
  },

  async verify (password, hash) {
    const stored = decode(hash)
    if (stored === undefined) return false
    const key = await derive(password, stored.salt, stored.params)
    return key.length === stored.key.length && timingSafeEqual(key, stored.key)
  },

  decoyHash: encode(params, randomBytes(SALT_BYTES), randomBytes(KEY_BYTES))
})
