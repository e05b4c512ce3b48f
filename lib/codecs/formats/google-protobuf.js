// google-protobuf, Google's own JavaScript protobuf runtime, over the code protoc's JavaScript
// generator writes into vendor/google-protobuf/ (committed: `npm run gen:proto-google` needs a
// protoc that still has that generator; a test checks the committed copy wherever one is
// available). The generated code registers every message under a global `proto` namespace.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'

export const format = 'google-protobuf'
export const binary = true
/** Generated code exists for the built-in tests' schemas only. */
export const customPayloads = false

const GENERATED = new URL('../../../vendor/google-protobuf/', import.meta.url)
const require = createRequire(import.meta.url)
for (const file of fs.readdirSync(GENERATED).filter((name) => name.endsWith('_pb.js'))) require(fileURLToPath(new URL(file, GENERATED)))

/**
 * The google-protobuf codec for a built-in test.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = (test) => googleProtobufCodec(test.type)

/**
 * The google-protobuf codec for a message type. The generated class serializes and parses (the
 * hot path); the payload is copied in and out through its generated accessors, guided by the same
 * schema loaded by reflection (once per run, and for fidelity checks).
 * @param {protobuf.Type} type the test's message type, from protobuf.js reflection over proto/
 * @returns {import('../registry.js').Codec}
 */
export function googleProtobufCodec (type) {
  const MessageClass = classOf(type)
  return Object.freeze({
    name: format,
    binary,
    prepare: (plain) => toMessage(type, plain),
    encode: (message) => message.serializeBinary(),
    decode: (frame) => MessageClass.deserializeBinary(frame),
    toPlain: (message) => toPlain(type, message)
  })
}

function classOf (type) {
  return type.fullName.slice(1).split('.').reduce((namespace, part) => namespace[part], globalThis.proto)
}

// Generated accessors are named from the field name in their own casing (`generatedAt` ->
// setGeneratedat, `order_id` -> setOrderId); they are found by name, ignoring case and underscores.
const accessorCache = new WeakMap()
function accessors (type) {
  if (!accessorCache.has(type)) {
    const names = Object.getOwnPropertyNames(classOf(type).prototype)
    const methods = new Map(names.map((name) => [name.toLowerCase(), name]))
    accessorCache.set(type, type.fieldsArray.map((field) => {
      const key = field.name.replace(/_/g, '').toLowerCase() + (field.repeated ? 'list' : '')
      return { field, get: methods.get(`get${key}`), set: methods.get(`set${key}`), has: methods.get(`has${key}`) }
    }))
  }
  return accessorCache.get(type)
}

function toMessage (type, plain) {
  const message = new (classOf(type))()
  for (const { field, set } of accessors(type)) {
    const value = plain[field.name]
    if (value === undefined || value === null) continue
    message[set](field.repeated ? value.map((item) => valueIn(field, item)) : valueIn(field, value))
  }
  return message
}

function valueIn (field, value) {
  if (field.resolvedType instanceof protobuf.Type) return toMessage(field.resolvedType, value)
  if (field.resolvedType instanceof protobuf.Enum && typeof value === 'string') return field.resolvedType.values[value]
  return value
}

// Back to the payload's plain shape, with protobuf.js's conventions: enums by name, fields that
// are not on the wire left out (unset presence, empty lists, proto3 defaults).
function toPlain (type, message) {
  const plain = {}
  for (const { field, get, has } of accessors(type)) {
    if (has && !message[has]()) continue
    const value = message[get]()
    if (field.repeated ? value.length === 0 : !has && isProto3Default(value)) continue
    plain[field.name] = field.repeated ? value.map((item) => valueOut(field, item)) : valueOut(field, value)
  }
  return plain
}

function valueOut (field, value) {
  if (field.resolvedType instanceof protobuf.Type) return toPlain(field.resolvedType, value)
  if (field.resolvedType instanceof protobuf.Enum) return field.resolvedType.valuesById[value]
  return value
}

const isProto3Default = (value) => value === 0 || value === '' || value === false
