/*
 * How far `npm run seed` is, on stderr (stdout keeps the one-line result):
 * on a terminal, a bar redrawn in place; in a pipe or a log file, where
 * carriage returns make a mess, a plain line now and then and one as each
 * table is done.
 */

export interface ProgressStream {
  isTTY?: boolean
  columns?: number
  write(text: string): unknown
}

// With the longest counts (10,000,000 / 10,000,000) the line fits 80 columns.
const BAR_WIDTH = 24
const REDRAW_MS = 100
const LINE_EVERY_MS = 5000

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`

const bar = (fraction: number): string => {
  const filled = Math.round(fraction * BAR_WIDTH)
  return `[${'#'.repeat(filled)}${'-'.repeat(BAR_WIDTH - filled)}]`
}

/** A seed's onProgress that reports to `stream`; `now` in milliseconds. */
export const seedProgress = (stream: ProgressStream, now: () => number = () => performance.now()) => {
  const started = now()
  let shown = -Infinity
  // A table's time runs from the end of the one before (its indexes built),
  // the first's from the start.
  let phaseStarted = started
  let lastFinished = started
  let current: string | undefined
  return (phase: string, done: number, total: number): void => {
    const at = now()
    if (phase !== current) {
      current = phase
      phaseStarted = lastFinished
      shown = -Infinity
    }
    const finished = done >= total
    if (finished) lastFinished = at
    if (!finished && at - shown < (stream.isTTY === true ? REDRAW_MS : LINE_EVERY_MS)) return
    shown = at
    const fraction = total === 0 ? 1 : Math.min(1, done / total)
    const counts = `${done.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`
    const percent = `${Math.floor(fraction * 100)}%`.padStart(4)
    if (stream.isTTY === true) {
      const line = `${phase.padEnd(11)} ${bar(fraction)} ${percent}  ${counts}  ${seconds(at - phaseStarted)}`
      // A terminal of unknown width reports 0 columns.
      const width = stream.columns !== undefined && stream.columns > 0 ? stream.columns : 200
      stream.write(`\r${line.slice(0, width - 1)}\u001b[K${finished ? '\n' : ''}`)
    } else {
      stream.write(`${phase} ${counts} (${percent.trim()})${finished ? ` done in ${seconds(at - phaseStarted)}` : ''}, ${seconds(at - started)} in all\n`)
    }
  }
}
