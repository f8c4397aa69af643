import t from 'tap'
import { inChunks, takeTurn } from '../src/turns.js'

/*
 * Big reads are cut into chunks that take turns with everything else on the
 * event loop (turns.ts). Checked by order of events, not by time: what
 * another request schedules while a big read runs happens between its
 * chunks, and two big reads alternate chunk by chunk.
 */

const mapOf = (keys: readonly number[]): Map<number, number> => new Map(keys.map((k) => [k, k * 10]))

t.test('a batch that fits in one chunk loads at once, without waiting for a turn', async (t) => {
  const events: string[] = []
  setImmediate(() => events.push('other request'))
  const loaded = await inChunks([1, 2, 3], 3, async (keys) => { events.push(`load ${keys.join(',')}`); return mapOf(keys) })
  t.same([...loaded], [[1, 10], [2, 20], [3, 30]])
  t.same(events, ['load 1,2,3'], 'loaded before anything else got a turn')
})

t.test('a bigger batch loads in chunks, and other work runs between them', async (t) => {
  const events: string[] = []
  const loaded = await inChunks([1, 2, 3, 4, 5], 2, async (keys) => {
    events.push(`load ${keys.join(',')}`)
    // Work that arrives meanwhile (I/O of another request) waits for the loop's next turn.
    setImmediate(() => events.push(`other after ${keys.join(',')}`))
    return mapOf(keys)
  })
  t.same([...loaded.keys()], [1, 2, 3, 4, 5], 'every key, in order')
  t.same(events, ['load 1,2', 'other after 1,2', 'load 3,4', 'other after 3,4', 'load 5'])
})

t.test('two big batches alternate, one chunk per turn', async (t) => {
  const events: string[] = []
  const load = (name: string) => async (keys: readonly number[]) => { events.push(`${name}${keys[0]!}`); return mapOf(keys) }
  await Promise.all([inChunks([1, 2, 3], 1, load('a')), inChunks([1, 2, 3], 1, load('b'))])
  t.same(events, ['a1', 'b1', 'a2', 'b2', 'a3', 'b3'])
})

t.test('turns are first come, first served', async (t) => {
  const order: number[] = []
  await Promise.all([1, 2, 3].map(async (i) => { await takeTurn(); order.push(i) }))
  t.same(order, [1, 2, 3])
})
