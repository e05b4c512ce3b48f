// Compiling one .proto file safely: a size limit, only well-known imports, one line per error.

import fs from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'
import { UsageError } from '../errors.js'
import { MAX_SCHEMA_BYTES } from '../defaults.js'

const require = createRequire(import.meta.url)
const { Type } = protobuf

// Inferred schemas import descriptor.proto to declare the json_value option. protobufjs ships it
// as JSON but does not bundle it like the other well-known files; registering it lets
// compileSchema, and protobuf.load() anywhere in this process, resolve that import.
if (!Object.hasOwn(protobuf.common, 'google/protobuf/descriptor.proto')) {
  protobuf.common('google/protobuf/descriptor.proto', require('protobufjs/google/protobuf/descriptor.json'))
}

/**
 * Compiles one self-contained .proto file. It may import google/protobuf well-known types
 * (any, duration, empty, field_mask, struct, timestamp, wrappers, descriptor) and nothing else.
 * @param {string} protoText .proto source (proto2, proto3 or editions)
 * @param {string} typeName message to return: full (`pbjson.Payload`) or simple (`Payload`) name
 * @param {object} [options]
 * @param {string} [options.filename='schema.proto'] name used in error messages
 * @returns {protobuf.Type} the resolved message type; field names are kept as declared (keepCase)
 * @throws {UsageError} one line: text over MAX_SCHEMA_BYTES, syntax error, unsupported import,
 *   unresolvable type, or no message named typeName
 */
export function compileSchema (protoText, typeName, { filename = 'schema.proto' } = {}) {
  if (typeof protoText !== 'string') throw new UsageError(`${filename}: schema must be text`)
  const size = Buffer.byteLength(protoText)
  if (size > MAX_SCHEMA_BYTES) throw new UsageError(`${filename}: schema is ${size} bytes, more than the ${MAX_SCHEMA_BYTES} allowed`)
  const root = new protobuf.Root()
  const failed = (err) => new UsageError(`${filename}: ${String(err?.message ?? err).split('\n')[0]}`)
  let parsed
  try {
    parsed = protobuf.parse(protoText, root, { keepCase: true })
  } catch (err) {
    throw failed(err)
  }
  for (const file of new Set([...parsed.imports ?? [], ...parsed.weakImports ?? []])) {
    if (file.startsWith('google/protobuf/') && Object.hasOwn(protobuf.common, file)) root.addJSON(protobuf.common[file].nested)
    else throw new UsageError(`${filename}: cannot import "${file}": only google/protobuf well-known types may be imported, send one self-contained file`)
  }
  try {
    root.resolveAll()
  } catch (err) {
    throw failed(err)
  }
  const type = typeof typeName === 'string' && typeName !== '' ? root.lookup(typeName, [Type]) : null
  if (!(type instanceof Type)) {
    const known = [...allTypes(root)].filter((candidate) => !candidate.fullName.startsWith('.google.')).map((candidate) => candidate.fullName.slice(1))
    throw new UsageError(`${filename}: no message type "${typeName}"${known.length ? ` (it has ${known.slice(0, 5).join(', ')}${known.length > 5 ? ', ...' : ''})` : ''}`)
  }
  return type
}

function * allTypes (namespace) {
  for (const nested of namespace.nestedArray) {
    if (nested instanceof Type) yield nested
    if (nested.nestedArray) yield * allTypes(nested)
  }
}

const PROTO_DIR = new URL('../../proto/', import.meta.url)
let builtInRoot

/**
 * A built-in test's message type by reflection over proto/*.proto (loaded once, keepCase): what
 * a codec is told of a built-in test's schema.
 * @param {string} typeName e.g. `bench.Medium`
 * @returns {protobuf.Type}
 */
export function builtInType (typeName) {
  builtInRoot ??= new protobuf.Root().loadSync(
    fs.readdirSync(PROTO_DIR).filter((file) => file.endsWith('.proto')).map((file) => fileURLToPath(new URL(file, PROTO_DIR))),
    { keepCase: true }
  )
  return builtInRoot.lookupType(typeName)
}
