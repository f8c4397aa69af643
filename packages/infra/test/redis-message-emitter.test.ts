import { randomBytes } from 'node:crypto'
import t from 'tap'
import type { MQEmitter, Message } from 'mqemitter'
import { redisMessageEmitter } from '@people-service/infra'
import { skipWithoutRedis, testRedisUrl } from '@people-service/infra/testing'

const closeAll = (...emitters: MQEmitter[]) => Promise.all(emitters.map((e) => new Promise<void>((resolve) => e.close(() => resolve()))))
const subscribed = (emitter: MQEmitter, topic: string, heard: Message[]) =>
  new Promise<void>((resolve) => emitter.on(topic, (message, done) => { heard.push(message); done() }, () => resolve()))
const emitted = (emitter: MQEmitter, message: Message) =>
  new Promise<void>((resolve, reject) => emitter.emit(message, (error) => (error ? reject(error) : resolve())))
const settle = () => new Promise((resolve) => setTimeout(resolve, 200))

t.test('instances of one deployment hear each other through Redis; another deployment does not', { skip: skipWithoutRedis }, async (t) => {
  const REDIS_URL = await testRedisUrl()
  const prefix = `people-test-${randomBytes(4).toString('hex')}:`
  const first = redisMessageEmitter(REDIS_URL, prefix)
  const second = redisMessageEmitter(REDIS_URL, prefix)
  const stranger = redisMessageEmitter(REDIS_URL, `other-${prefix}`)
  t.teardown(() => closeAll(first, second, stranger))
  const onSecond: Message[] = []
  const onStranger: Message[] = []
  await subscribed(second, 'MESSAGE_SENT', onSecond)
  await subscribed(stranger, 'MESSAGE_SENT', onStranger)
  await emitted(first, { topic: 'MESSAGE_SENT', payload: { text: 'hello' } })
  await settle()
  t.same(onSecond, [{ topic: 'MESSAGE_SENT', payload: { text: 'hello' } }], 'the topic is seen without the prefix')
  t.same(onStranger, [], 'a different prefix is a different deployment')
})

t.test('a removed listener hears nothing more', { skip: skipWithoutRedis }, async (t) => {
  const REDIS_URL = await testRedisUrl()
  const prefix = `people-test-${randomBytes(4).toString('hex')}:`
  const first = redisMessageEmitter(REDIS_URL, prefix)
  const second = redisMessageEmitter(REDIS_URL, prefix)
  t.teardown(() => closeAll(first, second))
  const heard: Message[] = []
  const listener = (message: Message, done: () => void) => { heard.push(message); done() }
  await new Promise<void>((resolve) => second.on('T', listener, () => resolve()))
  await emitted(first, { topic: 'T', n: 1 })
  await settle()
  await new Promise<void>((resolve) => second.removeListener('T', listener, () => resolve()))
  await emitted(first, { topic: 'T', n: 2 })
  await settle()
  t.same(heard.map((m) => m.n), [1])
})
