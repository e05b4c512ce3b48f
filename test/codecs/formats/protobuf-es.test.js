import { test } from 'node:test'
import assert from 'node:assert/strict'
import { codecFor, protobufEsCodec } from '../../../lib/codecs/formats/protobuf-es.js'
import { UsageError } from '../../../lib/errors.js'
import { TESTS } from '../../../lib/payloads/catalog.js'
import { testProtobufImplementation } from './protobuf-implementation.js'

testProtobufImplementation('protobuf-es', codecFor)

test('a test without generated code is refused with how to generate it', () => {
  assert.throws(() => protobufEsCodec({ ...TESTS[0], protoFile: 'missing.proto' }), (err) => err instanceof UsageError && err.message === 'protobuf-es code for missing.proto is missing: run npm run gen:proto-es')
})
