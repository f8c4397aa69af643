/** Port: one-way password hashing with a deliberately expensive function. */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  /** True when `password` produced `hash`; false for any other password or a hash it cannot read. */
  verify(password: string, hash: string): Promise<boolean>
  /**
   * A hash that no password matches, with the same parameters as `hash()`:
   * verifying against it when a username is unknown costs what a wrong
   * password costs, so response times do not tell which usernames exist.
   */
  readonly decoyHash: string
}
