import t from 'tap'
import { overJsonLimits, topLevelStrings } from '../src/json-depth.js'

/*
 * The one-pass scans that let the service refuse a JSON text without
 * parsing it (json-depth.ts): each must agree with JSON.parse on what it
 * reports, and cost about the same on any shape of a megabyte.
 */

const ENVELOPE = ['type', 'id'] as const

t.test('the top-level type and id of a message, as JSON.parse reads them', async (t) => {
  const messages = [
    '{"type":"subscribe","id":"1","payload":{"query":"{ a }"}}',
    '{ "payload": {"type":"nested","id":"inner"}, "id" : "outer", "type":"ping" }',
    '{"id":"a \\"quoted\\" id","type":"subscribe","payload":["type","id"]}',
    '{"id":"first","type":"complete","id":"last"}',
    '{"type":"ping","id":7}',
    '{"payload":"{\\"type\\":\\"fake\\"}","type":"pong"}'
  ]
  for (const text of messages) {
    const parsed = JSON.parse(text) as Record<string, unknown>
    const expected = Object.fromEntries(ENVELOPE.filter((name) => typeof parsed[name] === 'string').map((name) => [name, parsed[name]]))
    t.same(topLevelStrings(text, ENVELOPE), expected, text)
  }
})

t.test('what is not an object, or is broken, answers what could be found and never throws', async (t) => {
  t.same(topLevelStrings('["type","subscribe"]', ENVELOPE), {}, 'an array has no members')
  t.same(topLevelStrings('"type"', ENVELOPE), {})
  t.same(topLevelStrings('', ENVELOPE), {})
  t.same(topLevelStrings('{"type":"subscribe","id":"9","payload":{', ENVELOPE), { type: 'subscribe', id: '9' }, 'cut short after the envelope')
  t.same(topLevelStrings('{"type":"subscr', ENVELOPE), {}, 'a string that never closes')
})

t.test('a name written with escapes is not recognised: comparing it costs no parse', async (t) => {
  t.same(topLevelStrings('{"\\u0074ype":"subscribe","id":"1"}', ENVELOPE), { id: '1' })
})

t.test('a megabyte of any shape: the envelope is found past or around everything else', async (t) => {
  const subscribe = (variables: string) => `{"type":"subscribe","id":"big","payload":{"variables":${variables}}}`
  const texts = {
    'empty objects as members': subscribe(`{${Array.from({ length: 88_000 }, (_, i) => `"v${i}":{}`).join(',')}}`),
    'many top-level names after the envelope': `{"type":"subscribe","id":"big",${'"a":0,'.repeat(170_000)}"b":{"c":{"d":0}}}`,
    'one long string': subscribe(`{"v":"${'x'.repeat(1_000_000)}"}`)
  }
  for (const [shape, text] of Object.entries(texts)) {
    const { type, id } = JSON.parse(text) as { type: string, id: string }
    t.same(topLevelStrings(text, ENVELOPE), { type, id }, shape)
    t.equal(overJsonLimits(text), shape === 'one long string' ? undefined : 'holds more than 4,096 values', `${shape}: shallow, and as many values as it holds`)
  }
})
