import type { EventEmitter } from 'node:events'
import { Redis } from 'ioredis'
import type { MQEmitter, Message } from 'mqemitter'
import mqemitterRedis from 'mqemitter-redis'
import { FAIL_FAST, REDIS_COMMAND_TIMEOUT_MS, reconnectDelay } from './open-redis.js'

type Listener = (message: Message, done: () => void) => void

/**
 * A publish/subscribe emitter shared by every instance through Redis, for
 * GraphQL subscriptions. Redis channels are global to the server, so every
 * topic is prefixed with the deployment's key prefix: two deployments on one
 * Redis never see each other's messages. Listeners see the unprefixed topic.
 *
 * While Redis is away a publish fails at once (no offline queue), and while
 * it hangs, after REDIS_COMMAND_TIMEOUT_MS, so a request that sends a message
 * never waits on it; subscriptions are queued and resume when Redis returns.
 */
export const redisMessageEmitter = (url: string, prefix: string, onError: (error: Error) => void = () => {}): MQEmitter => {
  const pubConn = new Redis(url, FAIL_FAST)
  // No commandTimeout here: it would also fail the SUBSCRIBE waiting in the
  // offline queue while Redis is away, which is meant to wait, and
  // mqemitter-redis ignores that error and counts the topic as subscribed.
  // A connection that stops answering a (UN)SUBSCRIBE is dropped instead;
  // ioredis resends it and resubscribes once Redis answers again. A quiet
  // subscribed connection is never dropped: the timer runs only while a
  // command waits for its answer.
  const subConn = new Redis(url, { socketTimeout: REDIS_COMMAND_TIMEOUT_MS, retryStrategy: reconnectDelay })
  const inner = mqemitterRedis({ pubConn, subConn })
  // Connection trouble is reported on `state` (untyped in the package's
  // declarations); unheard, an 'error' event would throw.
  ;(inner as unknown as { state: EventEmitter }).state.on('error', onError)
  const wrapped = new Map<Listener, Listener>()
  const emitter: MQEmitter = {
    get current () { return inner.current },
    get concurrent () { return inner.concurrent },
    on (topic, listener, callback) {
      const unprefixing: Listener = (message, done) => listener({ ...message, topic }, done)
      wrapped.set(listener, unprefixing)
      inner.on(prefix + topic, unprefixing, callback)
      return emitter
    },
    emit (message, callback) {
      inner.emit({ ...message, topic: prefix + message.topic }, callback)
    },
    removeListener (topic, listener, callback) {
      const unprefixing = wrapped.get(listener)
      wrapped.delete(listener)
      if (unprefixing === undefined) {
        callback?.()
        return
      }
      inner.removeListener(prefix + topic, unprefixing, callback)
    },
    close (callback) {
      // Not mqemitter-redis' own close: its QUIT waits forever while Redis is
      // away, and rejects unhandled with no offline queue. Nothing needs a
      // goodbye: drop the connections.
      pubConn.disconnect()
      subConn.disconnect()
      callback()
    }
  }
  return emitter
}
