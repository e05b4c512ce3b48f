import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { parseConnectionTarget } from '../../lib/server/admission.js'
import { formatNames } from '../../lib/codecs/registry.js'
import { resolveTest } from '../../lib/payloads/catalog.js'

describe('parseConnectionTarget', () => {
  test('accepts tests by number and by name', () => {
    assert.equal(parseConnectionTarget('/?test=3&format=protobuf').test.name, resolveTest(3).name)
    assert.equal(parseConnectionTarget('/?test=small&format=json').format, 'json')
  })
  test('names what is missing or unknown', () => {
    assert.throws(() => parseConnectionTarget('/?format=json'), /missing \?test=/)
    assert.throws(() => parseConnectionTarget('/?test=3'), /missing &format=/)
    assert.throws(() => parseConnectionTarget('/?test=3&format=xml'), /^UsageError: unknown format 'xml': expected one of avro, cbor, .*, or add it with --codec-module <file\.js>$/)
    assert.throws(() => parseConnectionTarget('/?test=nope&format=json'), /unknown test 'nope'/)
  })
  test('knows every format, for built-in tests and a user\'s payload alike (admission asks the format whether it carries one)', () => {
    for (const format of formatNames()) {
      assert.equal(parseConnectionTarget(`/?test=5&format=${format}`).format, format)
      assert.equal(parseConnectionTarget(`/?test=custom&format=${format}`).test.custom, true)
    }
  })
})
