import t from 'tap'
import { seedProgress } from '../src/seed-progress.js'

/** A stream that keeps what is written, and a clock the test moves. */
const stream = (isTTY: boolean) => {
  const written: string[] = []
  return { isTTY, columns: 100, written, write: (text: string) => written.push(text) }
}

t.test('on a terminal: one bar per table, redrawn in place at most every 100 ms, ended by a newline', async (t) => {
  const terminal = stream(true)
  let now = 0
  const progress = seedProgress(terminal, () => now)
  progress('people', 0, 1000)
  now = 50
  progress('people', 500, 1000)
  now = 150
  progress('people', 500, 1000)
  now = 2150
  progress('people', 1000, 1000)
  t.equal(terminal.written.length, 3, 'a report within 100 ms of the last drawing is skipped')
  t.ok(terminal.written.every((text) => text.startsWith('\r')), 'each drawing goes back over the line')
  t.match(terminal.written[1], /^\rpeople +\[#{12}-{12}\] +50% {2}500 \/ 1,000 {2}0\.1 s/)
  t.match(terminal.written[2], /^\rpeople +\[#{24}\] 100% {2}1,000 \/ 1,000 {2}2\.1 s/)
  t.ok(terminal.written[2]?.endsWith('\u001b[K\n'), 'the rest of the line cleared, then a new line')
  now = 3150
  progress('friendships', 1, 10)
  t.match(terminal.written[3], /^\rfriendships \[#{2}-{22}\] +10% {2}1 \/ 10 {2}1\.0 s/, 'the next table starts its own bar at once, timed from the end of the one before')
})

t.test('elsewhere (a pipe, a log file): plain lines, every 5 s and as each table is done', async (t) => {
  const log = stream(false)
  let now = 0
  const progress = seedProgress(log, () => now)
  for (; now <= 12_000; now += 1000) progress('friendships', now, 20_000)
  progress('friendships', 20_000, 20_000)
  t.same(log.written, [
    'friendships 0 / 20,000 (0%), 0.0 s in all\n',
    'friendships 5,000 / 20,000 (25%), 5.0 s in all\n',
    'friendships 10,000 / 20,000 (50%), 10.0 s in all\n',
    'friendships 20,000 / 20,000 (100%) done in 13.0 s, 13.0 s in all\n'
  ])
})
