import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor, googleProtobufCodec } from '../../../lib/codecs/formats/google-protobuf.js'
import { builtInType } from '../../../lib/schema/compile.js'
import { testProtobufImplementation } from './protobuf-implementation.js'

testProtobufImplementation('google-protobuf', codecFor)

test('proto2 presence: a required 0 is written, an unset optional stays out, enums travel by name', () => {
  const codec = googleProtobufCodec(builtInType('person.Person'))
  const payload = { name: 'A', id: 0, phones: [{ number: '1', type: 'WORK' }, { number: '2' }] }
  const frame = codec.encode(codec.prepare(payload))
  // name "A", id 0, then two PhoneNumber messages: type WORK (2) set on the first only.
  assert.deepEqual([...frame], [0x0a, 0x01, 0x41, 0x10, 0x00, 0x22, 0x05, 0x0a, 0x01, 0x31, 0x10, 0x02, 0x22, 0x03, 0x0a, 0x01, 0x32])
  assert.deepStrictEqual(codec.toPlain(codec.decode(frame)), payload)
})
