import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { parseConnectionTarget } from '../../lib/server/admission.js'
import { CUSTOM_FORMATS, FORMATS } from '../../lib/codecs/registry.js'
import { resolveTest } from '../../lib/payloads/catalog.js'

describe('parseConnectionTarget', () => {
  test('accepts tests by number and by name', () => {
    assert.equal(parseConnectionTarget('/?test=3&format=protobuf').test.name, resolveTest(3).name)
    assert.equal(parseConnectionTarget('/?test=small&format=json').format, 'json')
  })
  test('names what is missing or unknown', () => {
    assert.throws(() => parseConnectionTarget('/?format=json'), /missing \?test=/)
    assert.throws(() => parseConnectionTarget('/?test=3'), /missing &format=/)
    assert.throws(() => parseConnectionTarget('/?test=3&format=xml'), /unknown format 'xml'/)
    assert.throws(() => parseConnectionTarget('/?test=nope&format=json'), /unknown test 'nope'/)
    assert.throws(() => parseConnectionTarget('/?test=custom&format=avro'), /format 'avro' does not support custom payloads/)
  })
  test('knows every format, and custom payloads in those that decode without the payload', () => {
    for (const format of FORMATS) assert.equal(parseConnectionTarget(`/?test=5&format=${format}`).format, format)
    for (const format of CUSTOM_FORMATS) assert.equal(parseConnectionTarget(`/?test=custom&format=${format}`).test.custom, true)
  })
})
