import t from 'tap'
import { isId, uuidv7Generator } from '@people-service/domain'

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const millisecondsOf = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16)

t.test('ids are canonical UUIDv7 carrying the clock, each different', async (t) => {
  const at = Date.parse('2026-11-21T10:00:00.123Z')
  let ms = at
  const ids = uuidv7Generator(() => ms)
  const made = new Set<string>()
  const wrong: string[] = []
  // Across several refills of the random pool, and several milliseconds.
  for (let i = 0; i < 5000; i++) {
    if (i % 1000 === 0) ms++
    const id = ids.next()
    if (!V7.test(id) || !isId(id) || millisecondsOf(id) !== ms) wrong.push(id)
    made.add(id)
  }
  t.same(wrong, [])
  t.equal(made.size, 5000)
})

t.test('ids from one generator strictly increase, even when the clock stalls or steps back', async (t) => {
  let ms = Date.parse('2026-11-21T10:00:00.000Z')
  const ids = uuidv7Generator(() => ms)
  let previous = ids.next()
  const outOfOrder: string[] = []
  // 5000 in one millisecond overflows the 12-bit counter into the next one.
  for (let i = 0; i < 5000; i++) {
    if (i === 3000) ms -= 10
    const id = ids.next()
    if (id <= previous) outOfOrder.push(`${id} after ${previous}`)
    previous = id
  }
  t.same(outOfOrder, [])
  t.equal(millisecondsOf(previous), Date.parse('2026-11-21T10:00:00.001Z'), 'the overflow borrowed the next millisecond')
})

t.test('the random part is random: no two generators repeat each other', async (t) => {
  const clock = () => Date.parse('2026-11-21T10:00:00.000Z')
  const a = uuidv7Generator(clock)
  const b = uuidv7Generator(clock)
  t.not(a.next().slice(19), b.next().slice(19))
})
