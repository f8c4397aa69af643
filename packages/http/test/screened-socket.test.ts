import { EventEmitter } from 'node:events'
import t from 'tap'
import { closeSocket, sendTo, type RawSocket } from '../src/graphql/subscriptions/screened-socket.js'

/*
 * What the server does with a WebSocket client that stops reading, or does
 * not answer a close (screened-socket.ts), on a stand-in for a `ws` socket
 * that records what it is asked to do.
 */

class RecordingSocket extends EventEmitter implements RawSocket {
  readonly protocol = 'graphql-transport-ws'
  readyState = 1
  bufferedAmount = 0
  readonly calls: string[] = []
  send (data: string): void { this.calls.push(`send ${data}`) }
  close (code?: number): void { this.calls.push(`close ${code}`) }
  terminate (): void {
    this.calls.push('terminate')
    this.emit('close', 1006, Buffer.alloc(0))
  }
}

t.test('a client with more than a MiB unread is dropped, not sent more', async (t) => {
  const socket = new RecordingSocket()
  socket.bufferedAmount = 1_048_576
  sendTo(socket, 'a')
  socket.bufferedAmount = 1_048_577
  sendTo(socket, 'b')
  t.same(socket.calls, ['send a', 'terminate'])
})

t.test('a close the client does not answer within a second drops the connection; an answered one does not', async (t) => {
  const silent = new RecordingSocket()
  const answering = new RecordingSocket()
  closeSocket(silent, 4403, 'Forbidden')
  closeSocket(answering, 4403, 'Forbidden')
  answering.emit('close', 4403, Buffer.from('Forbidden'))
  await new Promise((resolve) => setTimeout(resolve, 900))
  t.same(silent.calls, ['close 4403'], 'given its second')
  await new Promise((resolve) => setTimeout(resolve, 300))
  t.same(silent.calls, ['close 4403', 'terminate'])
  t.same(answering.calls, ['close 4403'])
})

t.test('a socket closed again (Mercurius, once for every send that fails after the close) is closed once, with one timer and one listener', async (t) => {
  const socket = new RecordingSocket()
  for (let n = 0; n < 25; n++) closeSocket(socket, 4403, 'Forbidden')
  t.same(socket.calls, ['close 4403'])
  t.equal(socket.listenerCount('close'), 1, 'no MaxListenersExceededWarning past ten')
  await new Promise((resolve) => setTimeout(resolve, 1200))
  t.same(socket.calls, ['close 4403', 'terminate'], 'dropped once its second has passed')
})
