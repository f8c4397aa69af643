/** Synthetic but plausible people, from a seeded generator so runs are repeatable. */
const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Frances', 'Dennis', 'Radia', 'John', 'Hedy', 'Tim', 'Katherine', 'Linus', 'Sophie', 'Guido', 'Anita', 'Bjarne']
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Hamilton', 'Thompson', 'Allen', 'Ritchie', 'Perlman', 'McCarthy', 'Lamarr', 'Berners-Lee', 'Johnson', 'Torvalds', 'Wilson', 'van Rossum', 'Borg', 'Stroustrup']
const CITIES: Array<[string, string]> = [['London', 'UK'], ['Paris', 'FR'], ['Berlin', 'DE'], ['Lisbon', 'PT'], ['Oslo', 'NO'], ['Kyoto', 'JP'], ['Lagos', 'NG'], ['Lima', 'PE']]

/** mulberry32: tiny, fast, good enough for test data. */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let x = state
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T

export const syntheticPerson = (random: () => number, n: number) => {
  const first = pick(random, FIRST)
  const last = pick(random, LAST)
  const [city, country] = pick(random, CITIES)
  return {
    name: `${first} ${last} ${n}`,
    age: Math.floor(random() * 90) + 10,
    email: `${first}.${last}.${n}@example.org`.toLowerCase().replace(/\s+/g, ''),
    address: { street: `${Math.floor(random() * 200) + 1} ${pick(random, LAST)} Street`, city, country }
  }
}
