export { buildApp, type AppOptions } from './app.js'
export { STATUS_OF } from './errors/status-of.js'
export type { Caller } from './types.js'
