import closeWithGrace from 'close-with-grace'
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
  const server = await startServer(config)
  // SIGTERM/SIGINT: finish in-flight requests, close the database, exit 0.
  // A second signal or 10 s without finishing forces the exit.
  closeWithGrace({ delay: 10_000 }, async ({ signal, err }) => {
    if (err) server.app.log.error({ err }, 'shutting down after an error')
    else server.app.log.info({ signal }, 'shutting down')
    await server.close()
  })
}

await main()
