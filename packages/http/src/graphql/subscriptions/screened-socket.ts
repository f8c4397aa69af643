import { EventEmitter } from 'node:events'

/** What this module uses of a `ws` WebSocket. */
export interface RawSocket {
  readonly protocol: string
  readonly readyState: number
  send(data: string, callback?: (error?: Error) => void): void
  close(code?: number, reason?: string): void
  /** Drops the connection at once: nothing more is read from it. */
  terminate(): void
  on(event: 'message', listener: (data: unknown, isBinary: boolean) => void): unknown
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
}

/**
 * The socket Mercurius is handed in place of the real one: it hears only the
 * messages `deliver` passes on, and what it sends goes through `outgoing`
 * first. Everything else (state, closing, close and error events) is the
 * real socket's. Mercurius uses the parts of the `ws` API written here.
 */
export class ScreenedSocket extends EventEmitter {
  readonly #socket: RawSocket
  readonly #outgoing: (data: string) => string

  constructor (socket: RawSocket, outgoing: (data: string) => string) {
    super()
    this.#socket = socket
    this.#outgoing = outgoing
    socket.on('close', (code, reason) => this.emit('close', code, reason))
    // An 'error' event with no listener throws: pass it on only when heard.
    socket.on('error', (error) => { if (this.listenerCount('error') > 0) this.emit('error', error) })
  }

  get protocol (): string { return this.#socket.protocol }
  get readyState (): number { return this.#socket.readyState }

  /** Hands Mercurius a message that passed the screening. */
  deliver (data: string): void {
    this.emit('message', data, false)
  }

  send (data: string, callback?: (error?: Error) => void): void {
    this.#socket.send(this.#outgoing(data), callback)
  }

  close (code?: number, reason?: string): void {
    this.#socket.close(code, reason)
  }

  terminate (): void {
    this.#socket.terminate()
  }
}
