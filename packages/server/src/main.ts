import closeWithGrace from 'close-with-grace'
import { failureCause } from './command-line.js'
import { ConfigError, loadConfig } from './config.js'
import { startServer } from './start-server.js'

const main = async (): Promise<void> => {
  let config
  try {
    config = loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`configuration error: ${error.message}\n`)
    process.exit(2)
  }
  let server
  try {
    server = await startServer(config)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`configuration error: ${error.message}\n`)
      process.exit(2)
    }
    // A database that cannot be reached, a port in use: the operator needs
    // the cause in one line, not a stack trace.
    process.stderr.write(`could not start: ${failureCause(error)}\n`)
    process.exit(1)
  }
  // SIGTERM/SIGINT: finish in-flight requests, close the database, exit 0.
  // A second signal or 10 s without finishing forces the exit.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an error')
    else server.app.log.info({ signal }, 'shutting down')
    await server.close()
  })
}

await main()
