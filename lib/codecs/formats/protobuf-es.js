// protobuf-es (@bufbuild/protobuf v2) over the code its generator writes into vendor/protobuf-es/
// (committed: `npm run gen:proto-es` needs protoc, which a fresh machine lacks; a test checks it
// is current).
import fs from 'node:fs'
import { fromBinary, fromJson, toBinary, toJson, ScalarType } from '@bufbuild/protobuf'
import { UsageError } from '../../errors.js'

export const format = 'protobuf-es'
export const binary = true
/** Generated code exists for the built-in tests' schemas only. */
export const customPayloads = false

const GENERATED = new URL('../../../vendor/protobuf-es/', import.meta.url)
const LONGS = new Set([ScalarType.INT64, ScalarType.UINT64, ScalarType.SINT64, ScalarType.FIXED64, ScalarType.SFIXED64])

// Generated modules are loaded once, up front, so creating a codec stays synchronous.
const generated = new Map()
for (const file of fs.readdirSync(GENERATED).filter((name) => name.endsWith('_pb.js'))) {
  generated.set(file.replace(/_pb\.js$/, '.proto'), await import(new URL(file, GENERATED)))
}

/**
 * The protobuf-es codec for a built-in test: JSON in via fromJson (once per run), toBinary and
 * fromBinary on the hot path, and back to the payload's plain shape for fidelity checks.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export function protobufEsCodec (test) {
  const module = generated.get(test.protoFile)
  if (!module) throw new UsageError(`protobuf-es code for ${test.protoFile} is missing: run npm run gen:proto-es`)
  const schema = module[`${test.typeName.split('.').pop()}Schema`]
  return Object.freeze({
    name: format,
    binary,
    prepare: (plain) => fromJson(schema, plain),
    encode: (message) => toBinary(schema, message),
    decode: (frame) => fromBinary(schema, frame),
    toPlain: (message) => withNumberLongs(schema, toJson(schema, message, { useProtoFieldName: true }))
  })
}

/**
 * The protobuf-es codec for a test (built-in tests only).
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = (test) => protobufEsCodec(test)

/** proto3 JSON writes 64-bit integers as strings; the payloads hold them as numbers. */
function withNumberLongs (schema, json) {
  for (const field of schema.fields) {
    const value = json[field.name]
    if (value === undefined) continue
    if (field.fieldKind === 'scalar' && LONGS.has(field.scalar)) json[field.name] = Number(value)
    else if (field.fieldKind === 'message') withNumberLongs(field.message, value)
    else if (field.fieldKind === 'list' && field.listKind === 'message') for (const item of value) withNumberLongs(field.message, item)
    else if (field.fieldKind === 'list' && field.listKind === 'scalar' && LONGS.has(field.scalar)) json[field.name] = value.map(Number)
  }
  return json
}
