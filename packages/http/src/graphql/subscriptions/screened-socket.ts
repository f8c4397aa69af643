import { EventEmitter } from 'node:events'

/** What this module uses of a `ws` WebSocket. */
export interface RawSocket {
  readonly protocol: string
  readonly readyState: number
  /** Bytes sent and not yet taken by the client. */
  readonly bufferedAmount: number
  send(data: string, callback?: (error?: Error) => void): void
  close(code?: number, reason?: string): void
  /** Drops the connection at once: nothing more is read from it. */
  terminate(): void
  on(event: 'message', listener: (data: unknown, isBinary: boolean) => void): unknown
  on(event: 'ping' | 'pong', listener: () => void): unknown
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown
  on(event: 'error', listener: (error: Error) => void): unknown
}

/*
 * A client that stops reading while messages for it pile up (errors that
 * echo its ids, events) is dropped rather than buffered without end: one
 * that sent refused subscribes with 1 MB ids and read nothing had grown the
 * server by 120 MB a second.
 */
const MAX_BUFFERED = 1_048_576

/** Sends `data` unless the client has more than MAX_BUFFERED unread; then drops the connection. */
export const sendTo = (socket: RawSocket, data: string, callback?: (error?: Error) => void): void => {
  if (socket.bufferedAmount > MAX_BUFFERED) return socket.terminate()
  socket.send(data, callback)
}

/*
 * After a close frame, `ws` reads on until the client answers it or 30 s
 * pass: a client that went on sending megabyte frames instead kept the
 * server more than a core busy. Clients answer at once; one that has not
 * within CLOSE_GRACE_MS is dropped.
 */
const CLOSE_GRACE_MS = 1000

/**
 * Sockets already closed here. Mercurius closes a connection again for every
 * send that fails once it is closing (each subscription's last event): one
 * close, one timer and one listener are enough.
 */
const closing = new WeakSet<RawSocket>()

/** Closes with `code`, and drops the connection if the client has not answered within CLOSE_GRACE_MS. */
export const closeSocket = (socket: RawSocket, code?: number, reason?: string): void => {
  if (closing.has(socket)) return
  closing.add(socket)
  try {
    socket.close(code, reason)
  } catch {
    // `ws` refuses what it cannot send (a reason over 123 bytes): the
    // connection goes all the same, else it would stay open, unread.
    socket.terminate()
    return
  }
  const timer = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS)
  timer.unref()
  socket.on('close', () => clearTimeout(timer))
}

/**
 * Closes a connection that speaks no subprotocol this server does (none,
 * or another): 1002, as Mercurius would, but without handing it over.
 * Mercurius closed it with `ws`' own 30 s wait and read on meanwhile: four
 * anonymous connections sending megabyte frames had the server read 3.6 GB
 * in 8 s, some 1.5 cores; and it logged the offered subprotocol, of any
 * length, twice. A client that sends anything but its answer to the close
 * (a message, a ping or a pong) is dropped at once.
 */
export const refuseSubprotocol = (socket: RawSocket): void => {
  const drop = (): void => socket.terminate()
  socket.on('message', drop)
  socket.on('ping', drop)
  socket.on('pong', drop)
  closeSocket(socket, 1002, 'subprotocols spoken here: graphql-transport-ws, graphql-ws')
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
  get bufferedAmount (): number { return this.#socket.bufferedAmount }

  /** Hands Mercurius a message that passed the screening. */
  deliver (data: string): void {
    this.emit('message', data, false)
  }

  send (data: string, callback?: (error?: Error) => void): void {
    sendTo(this.#socket, this.#outgoing(data), callback)
  }

  close (code?: number, reason?: string): void {
    closeSocket(this.#socket, code, reason)
  }

  terminate (): void {
    this.#socket.terminate()
  }
}
