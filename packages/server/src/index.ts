export { ConfigError, loadConfig, type Config } from './config.js'
export { startServer, type RunningServer, type StartOptions } from './start-server.js'
export { defaultMaxConnections, openFileLimit } from './open-files.js'
export { traceHeaders } from './trace-context.js'
