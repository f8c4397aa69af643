import type { Message, MQEmitter } from 'mqemitter'

type Listener = (message: Message, done: () => void) => void

/**
 * An emitter whose listeners (one per live subscription) each get an event
 * in a turn of the event loop of their own, one after the other.
 *
 * Handed straight to Mercurius, one event wakes every subscription at once:
 * each runs its selection (a person, their friends, their friends'
 * friends…) in the same turn, and with a synchronous database nothing else
 * is served until the last is done — twenty costly subscriptions held the
 * `POST /message` that sent the event for 2.3 s. Here the publisher is told
 * at once that the event went out, and between two subscribers' turns the
 * event loop serves whatever else is waiting.
 */
export const fairFanOut = (emitter: MQEmitter): MQEmitter => {
  // A FIFO with a moving head: shift() on a long array is linear.
  let queue: Array<() => void> = []
  let head = 0
  let scheduled = false

  const drain = (): void => {
    const delivery = queue[head]
    queue[head++] = noop
    if (head === queue.length) {
      queue = []
      head = 0
    }
    delivery?.()
    // An immediate queued while immediates run waits for the next turn,
    // after the poll for I/O.
    if (queue.length > 0) setImmediate(drain)
    else scheduled = false
  }

  // By listener and topic: mqemitter lets one listener hear several topics.
  const wrapped = new Map<Listener, Map<string, Listener>>()
  const fair: MQEmitter = {
    get current () { return emitter.current },
    get concurrent () { return emitter.concurrent },
    on (topic, listener, callback) {
      const deferred: Listener = (message, done) => {
        queue.push(() => listener(message, noop))
        if (!scheduled) {
          scheduled = true
          setImmediate(drain)
        }
        done()
      }
      const topics = wrapped.get(listener) ?? new Map<string, Listener>()
      topics.set(topic, deferred)
      wrapped.set(listener, topics)
      emitter.on(topic, deferred, callback)
      return fair
    },
    emit: (message, callback) => emitter.emit(message, callback),
    removeListener (topic, listener, callback) {
      const topics = wrapped.get(listener)
      const deferred = topics?.get(topic)
      topics?.delete(topic)
      if (topics?.size === 0) wrapped.delete(listener)
      if (deferred === undefined) {
        callback?.()
        return
      }
      emitter.removeListener(topic, deferred, callback)
    },
    close: (callback) => emitter.close(callback)
  }
  return fair
}

const noop = (): void => {}
