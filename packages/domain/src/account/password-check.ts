import { normalizePassword } from './account.js'
import type { PasswordHasher } from './password-hasher.js'

/**
 * Whether `password` (as typed) is the one `hash` was made from. Passwords
 * are hashed NFKC-normalized; a hash made before that rule holds the NFC
 * form (the hasher's own), which differs only for compatibility characters
 * (full-width letters, ligatures): for those alone the NFC form is tried
 * too. An unknown account's decoy check takes the same path, so timing
 * still says nothing about which usernames exist.
 */
export const passwordMatches = async (passwords: PasswordHasher, password: string, hash: string): Promise<boolean> => {
  const normalized = normalizePassword(password)
  if (await passwords.verify(normalized, hash)) return true
  return normalized !== password.normalize('NFC') && passwords.verify(password, hash)
}
