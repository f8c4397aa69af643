import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError } from './config.js'

/** A command line the program cannot make sense of. */
export class UsageError extends Error {}

/** parseArgs, its complaints (an unknown option, a missing value) turned into usage errors. */
export const parseCommandLine = <T extends ParseArgsConfig>(config: T): ReturnType<typeof parseArgs<T>> => {
  try {
    return parseArgs(config)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/**
 * What failed, in one line for the operator. A connection to a host name of
 * several addresses that all refused fails with an AggregateError whose own
 * message is empty: its attempts' messages say it.
 */
export const failureCause = (error: unknown): string => {
  if (error instanceof AggregateError && error.errors.length > 0) return [...new Set(error.errors.map(failureCause))].join('; ')
  if (!(error instanceof Error)) return String(error)
  if (error.message !== '') return error.message
  return 'code' in error && typeof error.code === 'string' ? error.code : error.name
}

/**
 * Runs one of the service's commands (seed, migrate): a wrong command line
 * prints the usage and a bad setting its message, both with exit code 2,
 * as the server does; anything else that fails exits 1.
 */
export const runCommand = (name: string, usage: string, main: () => Promise<void>): void => {
  main().catch((error: unknown) => {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n\n${usage}`)
      process.exit(2)
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`)
      process.exit(2)
    }
    // A new line first: progress may be on the current one.
    process.stderr.write(`\n${name} failed: ${failureCause(error)}\n`)
    process.exit(1)
  })
}
