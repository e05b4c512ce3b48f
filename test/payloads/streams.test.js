import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TESTS, everyMessage, loadMessages, loadPayload } from '../../lib/payloads/catalog.js'
import { STREAM_JSON_BYTES, STREAM_SEED, buildStream, hasStream } from '../../lib/payloads/streams.js'
import { createCodec, formatNames } from '../../lib/codecs/registry.js'
import { kindOf, learnShape } from '../../lib/schema/shape.js'
import { checkCodecFidelity } from '../../lib/schema/fidelity.js'
import { deflatedAlone, deflatedInTurn } from '../../bench/support/deflate.js'

const STREAMED = TESTS.filter(hasStream)
const jsonBytes = (message) => Buffer.byteLength(JSON.stringify(message))
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length

/** Every leaf's JSON kind by path, with array items under `[]`: integer, number, string, boolean. */
function kinds (value, path = '$', into = new Map()) {
  if (Array.isArray(value)) {
    for (const item of value) kinds(item, `${path}[]`, into)
  } else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) kinds(child, `${path}.${key}`, into)
  } else {
    const kind = kindOf(learnShape([value]))
    if (!into.has(path)) into.set(path, new Set())
    into.get(path).add(kind)
  }
  return into
}

test('every built-in test but people has a stream; people stays one message', () => {
  assert.deepEqual(STREAMED.map((info) => info.name), ['numbers', 'strings', 'medium', 'large', 'small', 'person', 'counters'])
  const people = TESTS.find((info) => info.name === 'people')
  assert.deepEqual(loadMessages(people).payload, { kind: 'repeated', messages: 1, seed: null })
})

test('streams are deterministic: the same seed gives the same messages, another seed others', () => {
  for (const info of STREAMED) {
    assert.deepEqual(buildStream(info, 50), buildStream(info, 50), info.name)
    assert.deepEqual(buildStream(info, 50), loadMessages(info).messages.slice(0, 50), `${info.name}: the catalog's stream`)
    assert.notDeepEqual(buildStream(info, 50, STREAM_SEED + 100), buildStream(info, 50), info.name)
  }
})

test('the messages vary: hardly any repeats its predecessor, and all but the tiny { id, status } are distinct', () => {
  for (const info of STREAMED) {
    const texts = loadMessages(info).messages.map((message) => JSON.stringify(message))
    const repeats = texts.filter((text, i) => i > 0 && text === texts[i - 1]).length
    assert.ok(repeats <= texts.length * 0.02, `${info.name}: ${repeats} messages repeat their predecessor`)
    // small draws from 495 possible messages (99 ids, 5 statuses), as a status feed would.
    assert.ok(new Set(texts).size > (info.name === 'small' ? 400 : texts.length * 0.99), `${info.name}: ${new Set(texts).size} distinct of ${texts.length}`)
  }
})

test('every message has the keys of the test\'s one message, and every value keeps its JSON kind', () => {
  for (const info of STREAMED) {
    const expected = kinds(loadPayload(info))
    const seen = kinds(loadMessages(info).messages)
    const paths = (map) => [...map.keys()].map((path) => path.replace(/^\$\[\]/, '$')).sort()
    assert.deepEqual(paths(seen), paths(expected), `${info.name}: the same fields`)
    for (const [path, set] of seen) {
      assert.equal(set.size, 1, `${info.name} ${path}: ${[...set].join(' and ')}`)
      assert.deepEqual([...set], [...expected.get(path.replace(/^\$\[\]/, '$'))], `${info.name} ${path}: the one message's kind`)
    }
  }
})

test('mean sizes are near the one message\'s (within 15%), and one cycle holds many deflate windows', () => {
  for (const info of STREAMED) {
    const { messages } = loadMessages(info)
    const size = mean(messages.map(jsonBytes))
    const one = jsonBytes(loadPayload(info))
    assert.ok(Math.abs(size / one - 1) <= 0.15, `${info.name}: mean ${size.toFixed(0)} B against ${one} B`)
    const cycle = messages.reduce((sum, message) => sum + jsonBytes(message), 0)
    assert.ok(cycle >= STREAM_JSON_BYTES * 0.85 && cycle >= 8 * 32 * 1024, `${info.name}: a cycle of ${cycle} B`)
  }
})

test('every message of every stream survives every codec exactly, the test\'s .proto included', async () => {
  for (const info of STREAMED) {
    const messages = everyMessage(info)
    assert.equal(messages.length, loadMessages(info).messages.length + 1, 'the stream and the one message')
    for (const format of formatNames()) {
      const codec = await createCodec(format, info)
      const lossy = messages.map((message) => checkCodecFidelity(codec, message)).filter((result) => !result.lossless)
      assert.deepEqual(lossy.slice(0, 1), [], `${info.name} in ${format}: ${lossy.length} messages change`)
    }
  }
})

test('JSON streams deflate as real traffic does (10-30% with context takeover); one message repeated, against itself, far more', async () => {
  for (const info of STREAMED) {
    const frames = loadMessages(info).messages.map((message) => Buffer.from(JSON.stringify(message)))
    const raw = mean(frames.map((frame) => frame.length))
    const stream = mean(await deflatedInTurn(frames)) / raw
    const alone = mean(frames.map(deflatedAlone)) / raw
    assert.ok(stream >= 0.1 && stream <= 0.3, `${info.name}: the stream deflates to ${(stream * 100).toFixed(1)}%`)
    assert.ok(alone > stream, `${info.name}: alone ${(alone * 100).toFixed(1)}%, more than in a stream`)
    if (info.name === 'small') continue // 22 bytes: the frame's own overhead dominates
    const one = Buffer.from(JSON.stringify(loadPayload(info)))
    const repeated = (await deflatedInTurn([one, one, one])).at(-1) / one.length
    assert.ok(repeated < 0.05, `${info.name}: repeated deflates to ${(repeated * 100).toFixed(1)}%`)
  }
})
