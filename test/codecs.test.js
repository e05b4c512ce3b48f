import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createCodec, FORMATS } from '../lib/codecs.js'
import { TESTS, loadPayload, resolveTest } from '../lib/payloads.js'

for (const info of TESTS) {
  for (const format of ['json', 'protobuf', 'protobuf-dynamic']) {
    test(`test ${info.name} round-trips exactly in ${format}`, () => {
      const codec = createCodec(format, info)
      const payload = loadPayload(info)
      const frame = codec.encode(codec.prepare(payload))
      assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(frame))), payload)
    })
  }
  test(`test ${info.name}: generated and reflected protobuf write the same bytes`, () => {
    const [generated, reflected] = ['protobuf', 'protobuf-dynamic'].map((format) => createCodec(format, info))
    const payload = loadPayload(info)
    assert.deepEqual(Buffer.from(generated.encode(generated.prepare(payload))), Buffer.from(reflected.encode(reflected.prepare(payload))))
  })
}

test('the wire formats are json (text) and protobuf (binary)', () => {
  assert.deepEqual(FORMATS, ['json', 'protobuf'])
  assert.equal(createCodec('json', resolveTest(1)).binary, false)
  assert.equal(createCodec('protobuf', resolveTest(1)).binary, true)
  assert.throws(() => createCodec('xml', resolveTest(1)), /unknown format 'xml'/)
})

test('decode throws on truncated protobuf and invalid JSON', () => {
  const protobuf = createCodec('protobuf', resolveTest(3))
  const frame = Buffer.from(protobuf.encode(protobuf.prepare(loadPayload(resolveTest(3)))))
  assert.throws(() => protobuf.decode(frame.subarray(0, frame.length - 3)))
  assert.throws(() => createCodec('json', resolveTest(3)).decode(Buffer.from('{"a":')))
})

test('no schema declares float, so no non-integer is rounded to 32 bits', () => {
  for (const file of fs.readdirSync(new URL('../proto/', import.meta.url)).filter((name) => name.endsWith('.proto'))) {
    assert.doesNotMatch(fs.readFileSync(new URL(`../proto/${file}`, import.meta.url), 'utf8'), /^\s*(optional |repeated )?float /m, file)
  }
})
