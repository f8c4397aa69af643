import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { startDevLoop } from './dev-loop.js'

/*
 * npm run dev: compiles the server and the packages it uses (not the tests)
 * in watch mode, restarts the server once per build without errors, and
 * stops both on Ctrl-C.
 */

const root = fileURLToPath(new URL('../../..', import.meta.url))
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')

const loop = startDevLoop({
  compiler: { command: process.execPath, args: [tsc, '-b', 'packages/server', '--watch', '--preserveWatchOutput'] },
  // The same node flags as `npm start` (docs/OPERATIONS.md, memory).
  program: { command: process.execPath, args: ['--max-semi-space-size=16', 'packages/server/dist/main.js'] },
  cwd: root
})

// Ctrl-C reaches the whole process group: the server starts its graceful
// close by itself; this waits for it, and a second Ctrl-C is not needed.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => { loop.stop().catch(() => {}) })
await loop.stopped
