import { readFileSync } from 'node:fs'

/**
 * The process' limit of open files where the system tells it (Linux's
 * /proc; Node raises the soft limit to the hard one as it starts), else
 * undefined.
 */
export const openFileLimit = (): number | undefined => {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((row) => row.startsWith('Max open files'))
    const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0]
    return soft !== undefined && /^\d+$/.test(soft) ? Number(soft) : undefined
  } catch {
    return undefined
  }
}

/**
 * How many connections the server takes by default: what the file limit
 * leaves once the database pool and a reserve for everything else (SQLite's
 * files, Redis, logs, Node's own) have theirs. Past the limit the process
 * fails where it next opens a file; under-pressure's memory reading threw
 * and shut it down. No limit known (not Linux, or unlimited): none set.
 */
export const defaultMaxConnections = (openFiles: number | undefined, databasePoolSize: number): number =>
  openFiles === undefined ? 0 : Math.max(1, openFiles - databasePoolSize - Math.max(128, Math.ceil(openFiles / 10)))
