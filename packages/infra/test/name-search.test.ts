import t from 'tap'
import type { PersonSummary } from '@people-service/domain'
import { seedDatabase, type DatabaseHandle } from '@people-service/infra'
import { postgresDatabase, type Teardown } from '@people-service/infra/testing'
import { nameSearch, type NameSearch } from '../src/person/name-search.js'
import { sqliteFile, turnsDuring } from './helper.js'

/*
 * A name search that no index serves walks the people in id order a range
 * at a time (src/person/name-search.ts). Here the ranges are 40 people and
 * the index is trusted up to 20 matches, so that a few hundred people cross
 * every boundary: the pages are the ones a filter over every name gives,
 * the caller is asked before each further range, and can stop the search.
 */

const stores: Record<string, (t: Teardown) => Promise<DatabaseHandle>> = {
  'sqlite file': sqliteFile,
  postgres: postgresDatabase
}

const PEOPLE = 301
const SIZES = { rangeRows: 40, indexedMatchesMax: 20 }
const rangesOf = (people: number): number => Math.ceil(people / SIZES.rangeRows)

/** Every page of a search, following it the way a client follows `next`. */
const allPages = async (search: NameSearch, nameContains: string, limit: number) => {
  const pages: PersonSummary[][] = []
  for (let afterId: string | undefined; ;) {
    const page = await search({ limit, nameContains, ...(afterId !== undefined ? { afterId } : {}) })
    if (page.length > 0) pages.push(page)
    if (page.length < limit) return pages
    afterId = page.at(-1)?.id
  }
}

for (const [store, open] of Object.entries(stores)) {
  t.test(`${store}: a name search walks the people a range at a time`, async (t) => {
    const handle = await open(t)
    await seedDatabase(handle, { people: PEOPLE, friends: 0, messages: 0 })
    const everyone = (await handle.db.selectFrom('person').select(['id', 'name']).execute()).sort((a, b) => a.id < b.id ? -1 : 1)
    const matching = (needle: string) => everyone.filter((person) => person.name.toLowerCase().includes(needle.toLowerCase()))
    const search = nameSearch(handle.db, handle.dialect, SIZES)

    // One and two characters (no index), three and more with few matches
    // (the index) and with many (a walk again), one nobody has.
    // A needle is found through its trigrams, then checked whole: ones whose
    // trigrams many names hold in another order, quotes, and LIKE's own
    // characters.
    const needles = ['E', 'a', '7', '12', 'ov', 'ace', '123', 'Lovelace 1', 'zq', 'zqx', 'barbarbar', 'lovelacelovelace', 'ace Lov', '"x"', 'a%c', 'e_1']
    for (const needle of needles) {
      const expected = matching(needle)
      for (const limit of [1, 7, 100, 1000]) {
        const pages = await allPages(search, needle, limit)
        t.same(pages.flat(), expected, `"${needle}", pages of ${limit}`)
        t.ok(pages.every((page) => page.length <= limit), `"${needle}": no page over ${limit}`)
      }
    }
    t.ok(matching('E').length > SIZES.indexedMatchesMax && matching('ace').length > SIZES.indexedMatchesMax, 'some needles match more than the index is trusted with')
    t.ok(matching('Lovelace 1').length > 0 && matching('Lovelace 1').length < SIZES.indexedMatchesMax, 'and some fewer')

    const asked = async (needle: string, limit: number) => {
      let times = 0
      const page = await search({ limit, nameContains: needle, beforeNextRange: async () => { times++ } })
      return { page, times }
    }
    t.same(await asked('zq', 10), { page: [], times: rangesOf(PEOPLE) - 1 }, 'a needle nobody has reads every range, asking before each after the first')
    t.equal((await asked('e', 10)).times, 0, 'a common needle fills its page in the first range')
    t.equal((await asked('Lovelace 1', 10)).times, 0, 'the index answers at once')
    if (store === 'sqlite file') {
      // FTS5 would check a whole-needle phrase's positions in every name
      // holding its trigrams: such a needle walks instead, a range at a time.
      // Every Barbara holds bar, arb and rba; nobody holds this.
      const barbaras = matching('barbara').length
      t.ok(barbaras > 1, `${barbaras} Barbaras`)
      let times = 0
      const trusting = nameSearch(handle.db, handle.dialect, { ...SIZES, indexedMatchesMax: barbaras })
      const page = await trusting({ limit: 10, nameContains: 'bar'.repeat(66), beforeNextRange: async () => { times++ } })
      t.same({ page, times }, { page: [], times: rangesOf(PEOPLE) - 1 }, 'a long needle whose trigrams as many names hold as the index is trusted with walks')
    }

    const stop = new Error('budget spent')
    let ranges = 0
    await t.rejects(search({ limit: 10, nameContains: 'zq', beforeNextRange: async () => { if (++ranges === 2) throw stop } }), stop,
      'the caller can stop the search before a range')
    t.equal(ranges, 2)
  })
}

t.test('sqlite file: without a caller to ask, the walk lets other callbacks run between ranges', async (t) => {
  const handle = await sqliteFile(t)
  await seedDatabase(handle, { people: PEOPLE, friends: 0, messages: 0 })
  const search = nameSearch(handle.db, handle.dialect, SIZES)
  const { result, turns } = await turnsDuring(() => search({ limit: 10, nameContains: 'zq' }))
  t.same(result, [])
  t.ok(turns >= rangesOf(PEOPLE) - 1, `another callback ran between every two ranges (${turns} times, ${rangesOf(PEOPLE)} ranges)`)
})
