import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface DevLoopOptions {
  /** A TypeScript compiler in watch mode (`tsc -b --watch`): it prints one summary per build. */
  compiler: { command: string, args: string[] }
  /** The program to run after every build without errors. */
  program: { command: string, args: string[] }
  cwd?: string
  /** Where the compiler's output and the loop's own notes go. */
  write?: (line: string) => void
}

export interface DevLoop {
  /** Stops the program (letting it shut down gracefully) and the compiler. */
  stop(): Promise<void>
  /** Resolves when both have exited. */
  stopped: Promise<void>
}

// tsc prints this once per build, after every project of the build is written:
// the one moment to restart, rather than once per file it writes.
const BUILD_SUMMARY = /Found (\d+) errors?\. Watching for file changes\./

const exitOf = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()))

/**
 * The `npm run dev` loop: the compiler watches the sources; after each build
 * without errors the program is stopped (SIGTERM, waiting for its graceful
 * close) and started again, so one edit gives one restart.
 */
export const startDevLoop = ({ compiler, program, cwd = process.cwd(), write = (line) => process.stdout.write(`${line}\n`) }: DevLoopOptions): DevLoop => {
  let running: ChildProcess | undefined
  let stopping = false
  // Restarts run one after another; builds finishing meanwhile ask for one more, not one each.
  let restarting: Promise<void> = Promise.resolve()
  let restartWanted = false

  const stopProgram = async (): Promise<void> => {
    const child = running
    running = undefined
    if (child === undefined) return
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exitOf(child)
  }

  const restart = (): void => {
    restartWanted = true
    restarting = restarting.then(async () => {
      if (!restartWanted || stopping) return
      restartWanted = false
      const first = running === undefined
      await stopProgram()
      if (stopping) return
      write(first ? '[dev] starting the server' : '[dev] build done: restarting the server')
      const child = spawn(program.command, program.args, { cwd, stdio: 'inherit' })
      child.once('exit', (code, signal) => {
        if (running === child && !stopping) write(`[dev] the server exited (${signal ?? code}); waiting for the next build`)
        if (running === child) running = undefined
      })
      running = child
    })
  }

  const tsc = spawn(compiler.command, compiler.args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] })
  createInterface({ input: tsc.stdout! }).on('line', (line) => {
    write(line)
    const summary = BUILD_SUMMARY.exec(line)
    if (summary === null) return
    if (summary[1] === '0') restart()
    else write('[dev] the build has errors: the server keeps running the last good build')
  })
  const compilerExited = exitOf(tsc)

  const stop = async (): Promise<void> => {
    stopping = true
    if (tsc.exitCode === null && tsc.signalCode === null) tsc.kill('SIGTERM')
    await restarting
    await Promise.all([stopProgram(), compilerExited])
  }
  // If the compiler dies on its own, nothing would ever restart the server: stop too.
  const stopped = compilerExited.then(async () => {
    if (!stopping) write('[dev] the compiler exited; stopping')
    await stop()
  })
  return { stop, stopped }
}
