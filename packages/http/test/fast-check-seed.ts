import fc from 'fast-check'

/** The seed the property tests use unless told otherwise. */
export const DEFAULT_SEED = 20261121

/**
 * A fixed seed keeps CI repeatable; FAST_CHECK_SEED=<n> replays a run (a
 * failure report prints its seed) and FAST_CHECK_SEED=random explores new
 * ones. Sets fast-check's global seed for this test file and returns it.
 */
export const useFastCheckSeed = (): number => {
  const given = process.env.FAST_CHECK_SEED
  const seed = given === 'random' ? Math.floor(Math.random() * 2 ** 31) : Number(given ?? DEFAULT_SEED)
  if (!Number.isSafeInteger(seed)) throw new Error(`FAST_CHECK_SEED must be an integer or "random", not ${JSON.stringify(given)}`)
  fc.configureGlobal({ seed })
  return seed
}
