/**
 * Who befriends whom, as positions 0 … n-1 in creation order, in a form SQL
 * can expand: person i befriends (i + d) mod n for every d of `deltas`.
 *
 * A circulant graph: friends/2 random offsets 0 < o < n/2, each taken both
 * ways (d = o and d = n - o), so the set is symmetric by construction and no
 * pair comes twice. An odd count adds one partner each: the person opposite
 * (d = n/2) when n is even; when n is odd, neighbours pair up (0-1, 2-3, …)
 * and the last person has one friend less, since n people cannot all have an
 * odd number of friends. Never more than n - 1 each, never oneself.
 */
export interface FriendshipPattern {
  /** Distinct, in 0 < d < n. */
  deltas: number[]
  /** Whether neighbours pair up as well: 2k with 2k + 1, the last of an odd n alone. */
  pairNeighbours: boolean
  /** Friendships (each stored as two rows). */
  friendships: number
}

export const friendshipPattern = (random: () => number, n: number, friends: number): FriendshipPattern => {
  const wanted = Math.min(friends, Math.max(0, n - 1))
  const odd = wanted % 2 === 1
  const pairNeighbours = odd && n % 2 === 1
  // Offset 1 is kept for the pairs when n is odd; n/2 (even n) is never drawn.
  const lowest = pairNeighbours ? 2 : 1
  const highest = Math.ceil(n / 2) - 1
  const chosen = new Set<number>()
  while (chosen.size < Math.floor(wanted / 2)) chosen.add(lowest + Math.floor(random() * (highest - lowest + 1)))
  const deltas = [...chosen].flatMap((o) => [o, n - o])
  if (odd && !pairNeighbours) deltas.push(n / 2)
  const rows = n * deltas.length + (pairNeighbours ? 2 * Math.floor(n / 2) : 0)
  return { deltas, pairNeighbours, friendships: rows / 2 }
}
