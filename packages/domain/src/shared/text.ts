/*
 * Text as the contract counts it: in characters (code points). A lone
 * surrogate is half of one; no database stores it as given (UTF-8 cannot
 * encode it), so text holding one is refused rather than silently changed.
 */

const LONE_SURROGATE = /\p{Cs}/u

/** True when every UTF-16 surrogate in `value` is one half of a pair. */
export const isWellFormedText = (value: string): boolean => !LONE_SURROGATE.test(value)

/** The length in characters (code points), not UTF-16 units or bytes. */
export const characterCount = (value: string): number => [...value].length
