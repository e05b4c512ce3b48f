// Lossless JSON -> .proto inference: a schema whose every value round-trips through protobuf
// unchanged (the document is read with json-exact.js, so big integers stay exact).
//
// Mapping (proto3):
// - object -> message; keys become fields in first-seen order, json_name holds any key the
//   field name does not spell exactly; scalar fields are `optional` so 0, "", false survive
//   and an absent key stays absent;
// - array -> `repeated`; when the array itself needs presence, or sits inside another array,
//   it lives in a list message (below);
// - an object whose keys are data rather than names (numeric or ID-like keys, or many keys whose
//   values share one kind), present wherever its parent is -> `map<string, T>`;
// - a key or array element holding more than one JSON kind (null counts as a kind) -> a
//   "value message", told by its shape alone (no custom option, so any toolchain loads the
//   schema): it stands for one JSON value, whichever of its fields is set: null_value,
//   bool_value, integer_value, number_value, string_value, object_value (a oneof named `kind`),
//   else the array in list_value;
// - values nested deeper than protobuf decoders accept, or never seen with content (elements of
//   arrays that are always empty) -> JsonText, a value message carrying the exact JSON text.

import pluralize from 'pluralize'
import { UsageError } from '../errors.js'
import { linkedPathText } from './json-exact.js'
import { INT64_MAX, learnShape, mergeShape, newShape, observe } from './shape.js'

/**
 * Deepest message nesting (the root message counts as 1) an inferred schema uses. protoc's and
 * protobufjs' decoders refuse more than 100 nested messages by default, so deeper JSON subtrees
 * are carried as exact JSON text (message JsonText) instead of typed messages.
 */
export const MAX_MESSAGE_DEPTH = 100

/** Objects with at least this many keys whose values share one kind are maps (dictionaries), not messages. */
const MAP_MIN_KEYS = 20

/** Keys that are data: integers, UUIDs, long hex strings, or a short prefix and a number (`sku-10492`). */
const DATA_KEY = /^(-?\d+|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{16,}|[A-Za-z]{1,4}[-_:]?\d{3,})$/i

/**
 * Field names inside a value message, by the JSON kind each one carries. `text` holds exact
 * JSON text of any value; `list` is the repeated field used when no other field is set.
 */
export const VALUE_FIELDS = Object.freeze({
  bool: 'bool_value',
  integer: 'integer_value',
  number: 'number_value',
  string: 'string_value',
  object: 'object_value',
  list: 'list_value',
  null: 'null_value',
  text: 'json_text'
})

const NULL_VALUE_TYPE = '.google.protobuf.NullValue'
const INT32_MIN = -(2 ** 31)
const INT32_MAX = 2 ** 31 - 1
const INT64_MIN = -(2n ** 63n)
const UINT64_MAX = 2n ** 64n - 1n
// Field numbers protobuf reserves for its own implementation.
const RESERVED_FIELD_NUMBERS = { first: 19000, last: 19999 }

// Words the proto grammar or protobufjs' generated message objects give a meaning to.
const RESERVED_FIELD_NAMES = new Set([
  'syntax', 'edition', 'import', 'weak', 'public', 'package', 'option', 'optional', 'required',
  'repeated', 'oneof', 'map', 'reserved', 'extensions', 'extend', 'to', 'max', 'message', 'enum',
  'service', 'rpc', 'returns', 'stream', 'group', 'true', 'false', 'inf', 'nan', 'double', 'float',
  'int32', 'int64', 'uint32', 'uint64', 'sint32', 'sint64', 'fixed32', 'fixed64', 'sfixed32',
  'sfixed64', 'bool', 'string', 'bytes', 'constructor', 'prototype'
])

// ---------------------------------------------------------------------------------------------
// Protobuf types of shapes (shape.js: what was seen at one position of the document)

/** What protobuf cannot hold beyond what JSON cannot: strings and keys are UTF-8, integers 64 bits at most. */
const PROTOBUF_REFUSALS = Object.freeze({
  value (value) {
    if (typeof value === 'string' && !value.isWellFormed()) return 'string has an unpaired UTF-16 surrogate, which a protobuf string (UTF-8) cannot hold'
    if (typeof value === 'bigint' && (value < INT64_MIN || value > UINT64_MAX)) return `integer ${value} does not fit in 64 bits, so no protobuf type holds it exactly`
    return undefined
  },
  key (key) {
    return key.isWellFormed() ? undefined : 'key has an unpaired UTF-16 surrogate, which protobuf (UTF-8) cannot hold'
  }
})

/** The proto integer type that holds every integer seen, or null if none were seen. */
function integerType (shape) {
  if (shape.intMin === null) return null
  const negative = shape.intMin < 0
  if (shape.intMin >= INT32_MIN && shape.intMax <= INT32_MAX) return negative ? 'sint32' : 'int32'
  if (shape.intMax <= INT64_MAX) return negative ? 'sint64' : 'int64'
  if (negative) {
    throw new UsageError(`${linkedPathText(shape.beyondInt64At)}: integer ${shape.intMax} needs uint64 but ${linkedPathText(shape.negativeAt)} is negative; no 64-bit protobuf type holds both`)
  }
  return 'uint64'
}

/**
 * The JSON kinds seen at a shape, in the order value-message fields are declared. Integers join
 * the doubles when a double holds every one of them exactly.
 */
function kindsOf (shape) {
  let integer = integerType(shape)
  const safeForDouble = integer !== null &&
    shape.intMin >= Number.MIN_SAFE_INTEGER && shape.intMax <= Number.MAX_SAFE_INTEGER
  if (shape.double && safeForDouble) integer = null
  const kinds = []
  if (shape.bool) kinds.push({ kind: 'bool', scalar: 'bool' })
  if (integer) kinds.push({ kind: 'integer', scalar: integer })
  if (shape.double) kinds.push({ kind: 'number', scalar: 'double' })
  if (shape.string) kinds.push({ kind: 'string', scalar: 'string' })
  if (shape.object) kinds.push({ kind: 'object' })
  if (shape.array) kinds.push({ kind: 'list' })
  if (shape.null) kinds.push({ kind: 'null', scalar: NULL_VALUE_TYPE })
  return kinds
}

// ---------------------------------------------------------------------------------------------
// Naming

/** Lowercase ASCII words of a key: camelCase and punctuation split it, accents are dropped. */
function asciiWords (text) {
  return text
    .normalize('NFKD')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
}

/** Field name for a key: snake_case ASCII, never a keyword, never starting with a digit. */
function fieldNameFor (key) {
  let name = asciiWords(key).join('_') || 'field'
  if (/^[0-9]/.test(name)) name = `field_${name}`
  return RESERVED_FIELD_NAMES.has(name) ? `${name}_` : name
}

// `data` and `metadata` are plurals to a grammarian and mass nouns to a programmer: no `Datum`.
pluralize.addUncountableRule(/data$/i)

/**
 * Message name for the objects under a key; `element` for the elements of an array (or the values
 * of a map) under it: the key's last word made singular (`statuses` -> `Status`), or `...Item`
 * when it is not a plural.
 */
function messageNameFor (key, { element = false } = {}) {
  const words = asciiWords(key)
  if (element && words.length > 0) {
    const last = words[words.length - 1]
    const singular = pluralize.singular(last)
    if (singular !== last && /^[a-z]/.test(singular)) words[words.length - 1] = singular
    else words.push('item')
  }
  let name = words.map((word) => word[0].toUpperCase() + word.slice(1)).join('') || (element ? 'ObjectItem' : 'Object')
  if (/^[0-9]/.test(name)) name = `Object${name}`
  return name
}

/** Allocates field names (unique as protoc requires: ignoring case and underscores) and numbers. */
function createFieldAllocator () {
  const taken = new Set()
  let nextNumber = 1
  return {
    name (candidate) {
      let name = candidate
      for (let n = 2; taken.has(normalize(name)); n++) name = `${candidate}_${n}`
      taken.add(normalize(name))
      return name
    },
    number () {
      if (nextNumber === RESERVED_FIELD_NUMBERS.first) nextNumber = RESERVED_FIELD_NUMBERS.last + 1
      return nextNumber++
    }
  }
  function normalize (name) { return name.replace(/_/g, '').toLowerCase() }
}

/** A proto string literal that protoc (bytes, UTF-8) and protobufjs (UTF-16) read alike. */
function protoString (text) {
  // Octal escapes are bytes to protoc but code units to protobufjs, so only ASCII is escaped
  // and other characters are written as they are (UTF-8 in the file).
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must be escaped
  return `"${text.replace(/[\x00-\x1f\x7f"\\]/g, (char) => {
    if (char === '"' || char === '\\') return `\\${char}`
    return `\\${char.charCodeAt(0).toString(8).padStart(3, '0')}`
  })}"`
}

// ---------------------------------------------------------------------------------------------
// Schema emission

/**
 * Infers a proto3 schema that holds the value exactly: every integer, double, string, null,
 * empty container, absent key and original key comes back unchanged through
 * fidelity.createAdapter(type).toMessage / encode / decode / fromMessage.
 * Types come from all values seen at a position: integers -> int32 (sint32 with negatives),
 * beyond int32 -> int64 / sint64 (uint64 above int64), non-integers (and -0) -> double.
 * Output is deterministic: fields in first-seen key order, messages in first-use order.
 * @param {*} value a JSON value, as from parseJsonExact (BigInt for big integers) or JSON.parse
 * @param {object} [options]
 * @param {string} [options.typeName='Payload'] name of the root message
 * @param {string} [options.packageName='pbjson'] proto package
 * @returns {{ proto: string, typeName: string }} the .proto text and the root's full name (`package.Type`)
 * @throws {UsageError} naming the JSON path of a value no protobuf type holds exactly (an integer
 *   beyond 64 bits, negative and > 2^63-1 integers at one position, a string with an unpaired
 *   surrogate, a non-JSON value), or for an invalid type or package name
 */
export function inferSchema (value, { typeName = 'Payload', packageName = 'pbjson' } = {}) {
  checkNames(typeName, packageName)
  const messages = emitMessages(learnShape([value], PROTOBUF_REFUSALS), typeName)
  return { proto: renderFile(packageName, messages, 'a JSON document'), typeName: `${packageName}.${typeName}`, ...summary(messages) }
}

/**
 * Infers one schema for a corpus of messages, as inferSchema does for one document: every
 * message is observed at the root, so a key some messages lack is optional, a key that holds
 * different kinds in different messages is a value message, and messages of several kinds (a
 * shared `type` tag) share one message with the union of their fields.
 * @param {Array<{value: *, where: string}>} messages each with where it came from, for errors (`line 12`)
 * @param {{typeName?: string, packageName?: string}} [options]
 * @returns {{proto: string, typeName: string, maps: string[], unions: string[]}} maps: the keys that became
 *   maps; unions: the value messages (positions holding several JSON kinds)
 * @throws {UsageError} naming the message and JSON path of a value no protobuf type holds
 */
export function inferCorpusSchema (messages, { typeName = 'Payload', packageName = 'pbjson' } = {}) {
  checkNames(typeName, packageName)
  const root = newShape()
  for (const { value, where } of messages) {
    try {
      observe(root, value, PROTOBUF_REFUSALS)
    } catch (err) {
      throw new UsageError(`${where}: ${err.message}`)
    }
  }
  const emitted = emitMessages(root, typeName)
  const source = `a corpus of ${messages.length} JSON message${messages.length === 1 ? '' : 's'}`
  return { proto: renderFile(packageName, emitted, source), typeName: `${packageName}.${typeName}`, ...summary(emitted) }
}

/** What a reader of an inferred schema wants to know first: which keys became maps, which positions unions. */
function summary ({ maps, definitions }) {
  const isUnion = (definition) => definition.valueMessage && definition.lines.includes('  oneof kind {')
  return { maps, unions: definitions.filter(isUnion).map((definition) => definition.name) }
}

function checkNames (typeName, packageName) {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(typeName)) throw new UsageError(`invalid message name "${typeName}": use letters, digits and _`)
  if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/.test(packageName)) throw new UsageError(`invalid package name "${packageName}": use dot-separated identifiers`)
}

/**
 * Turns the root shape into message definitions: object messages in first-use order, each value
 * message right after the types it refers to.
 * @returns {{ definitions: Array<{name: string, comment?: string, lines: string[], valueMessage: boolean}>, usesNullValue: boolean, maps: string[] }}
 */
function emitMessages (rootShape, rootName) {
  const emitter = new MessageEmitter()
  const rootKinds = kindsOf(rootShape)
  if (rootKinds.length === 1 && rootKinds[0].kind === 'object') emitter.objectMessage(rootShape.object, 1, rootName)
  else emitter.valueMessage(rootShape, rootKinds, 1, nameHint(rootName), rootName)
  const { definitions, usesNullValue, maps } = emitter
  return { definitions, usesNullValue, maps }
}

/** The message definitions of one schema as they are emitted, and the names they have taken. */
class MessageEmitter {
  definitions = []
  signatures = new Map() // message name -> body text when shareable (value messages), else null
  unionNames = new Set()
  maps = []
  usesNullValue = false

  // Reserves a message name; value messages with the same name and body share one definition.
  claimName (candidate, signature = null) {
    for (let n = 1; ; n++) {
      const name = n === 1 ? candidate : `${candidate}${n}`
      if (!this.signatures.has(name)) {
        this.signatures.set(name, signature)
        return { name, isNew: true }
      }
      if (signature !== null && this.signatures.get(name) === signature) return { name, isNew: false }
    }
  }

  scalar (type) {
    if (type === NULL_VALUE_TYPE) this.usesNullValue = true
    return type
  }

  // fields: [{ name, type, repeated? }]; the non-repeated ones form the oneof `kind`.
  defineValueMessage (candidate, fields, comment) {
    let number = 1
    const declare = (indent, { name, type, repeated }) => `${indent}${repeated ? 'repeated ' : ''}${type} ${name} = ${number++};`
    const alternatives = fields.filter((field) => !field.repeated)
    const list = fields.filter((field) => field.repeated)
    const lines = alternatives.length > 1 || (alternatives.length === 1 && alternatives[0].name !== VALUE_FIELDS.text)
      ? ['  oneof kind {', ...alternatives.map((field) => declare('    ', field)), '  }']
      : alternatives.map((field) => declare('  ', field))
    lines.push(...list.map((field) => declare('  ', field)))
    const { name, isNew } = this.claimName(candidate, lines.join('\n'))
    if (isNew) this.definitions.push({ name, comment, lines, valueMessage: true })
    return name
  }

  jsonText () {
    return this.defineValueMessage('JsonText', [{ name: VALUE_FIELDS.text, type: 'string' }],
      '// Exact JSON text of a value nested too deep for protobuf decoders, or never seen with content.')
  }

  /**
   * Type of one position. `depth` is where its message would sit (root = 1); `hint` names object
   * messages; a plain `repeated` ({ repeatedOf }) only where the position is an object key
   * present in every instance, since repeated fields have no presence and cannot nest.
   */
  typeOf (shape, depth, hint, { plainRepeatedAllowed = false } = {}) {
    const kinds = kindsOf(shape)
    if (kinds.length === 1 && kinds[0].scalar) return this.scalar(kinds[0].scalar)
    if (kinds.length === 0 || depth >= MAX_MESSAGE_DEPTH) return this.jsonText()
    const [{ kind }] = kinds
    if (kinds.length === 1 && kind === 'object') return this.objectMessage(shape.object, depth, hint.name())
    if (kinds.length === 1 && kind === 'list' && plainRepeatedAllowed) return { repeatedOf: this.elementType(shape, depth, hint) }
    return this.valueMessage(shape, kinds, depth, hint)
  }

  elementType (shape, elementDepth, hint) {
    return this.typeOf(shape.array.element, elementDepth, hint.element())
  }

  valueMessage (shape, kinds, depth, hint, forcedName) {
    const fields = kinds.map(({ kind, scalar: type }) => {
      if (kind === 'object') return { name: VALUE_FIELDS.object, type: this.objectMessage(shape.object, depth + 1, hint.name()) }
      if (kind === 'list') return { name: VALUE_FIELDS.list, type: this.elementType(shape, depth + 1, hint), repeated: true }
      return { name: VALUE_FIELDS[kind], type: this.scalar(type) }
    })
    // Short unions of plain parts read best named by them (StringOrNull, DoubleListList); others by position.
    const plain = fields.length <= 2 && fields.every((field) => !this.unionNames.has(field.type))
    const name = this.defineValueMessage(forcedName ?? (plain ? fields.map(valueNamePart).join('Or') : `${hint.name()}Value`), fields)
    if (fields.length > 1) this.unionNames.add(name)
    return name
  }

  objectMessage (objectShape, depth, candidate) {
    const { name } = this.claimName(candidate)
    const definition = { name, lines: [], valueMessage: false }
    this.definitions.push(definition)
    const allocator = createFieldAllocator()
    for (const [key, { shape, count }] of objectShape.keys) {
      const fieldName = allocator.name(fieldNameFor(key))
      // A map, like a repeated field, is always there: only where the key is in every instance.
      const always = count === objectShape.instances
      const type = always && isMap(shape)
        ? this.mapType(shape, depth, key)
        : this.typeOf(shape, depth + 1, nameHint(key), { plainRepeatedAllowed: always })
      const label = type.repeatedOf ? 'repeated ' : SCALAR_TYPES.has(type) ? 'optional ' : ''
      const jsonName = fieldName === key ? '' : ` [json_name = ${protoString(key)}]`
      definition.lines.push(`  ${label}${type.repeatedOf ?? type} ${fieldName} = ${allocator.number()}${jsonName};`)
    }
    return name
  }

  // The values of every key, merged into one shape: what a map's values hold.
  mapType (shape, depth, key) {
    this.maps.push(key)
    const values = newShape()
    for (const slot of shape.object.keys.values()) mergeShape(values, slot.shape)
    return `map<string, ${this.typeOf(values, depth + 1, nameHint(key, 1))}>`
  }
}

/**
 * Whether an object position holds a dictionary (keys that are data) rather than a record:
 * only objects were seen there, and either every key looks like an ID or a number, or there
 * are many keys and their values are all of one kind.
 */
function isMap (shape) {
  if (kindsOf(shape).length !== 1 || !shape.object) return false
  const keys = [...shape.object.keys.keys()]
  if (keys.length === 0) return false
  if (keys.every((key) => DATA_KEY.test(key))) return true
  if (keys.length < MAP_MIN_KEYS) return false
  const values = newShape()
  for (const slot of shape.object.keys.values()) mergeShape(values, slot.shape)
  return kindsOf(values).length === 1
}

/** Names for object messages found under a key, or in (nested) arrays under it. */
function nameHint (key, arrayLevels = 0) {
  return {
    name: () => arrayLevels === 0 ? messageNameFor(key) : messageNameFor(key, { element: true }) + 'Item'.repeat(arrayLevels - 1),
    element: () => nameHint(key, arrayLevels + 1)
  }
}

const SCALAR_TYPES = new Set(['bool', 'int32', 'sint32', 'int64', 'sint64', 'uint64', 'double', 'string', NULL_VALUE_TYPE])

/** Part of a value message's name for one of its fields: `Double`, `Null`, `FeatureList`. */
function valueNamePart ({ type, repeated }) {
  const typeName = type === NULL_VALUE_TYPE ? 'Null' : SCALAR_TYPES.has(type) ? type[0].toUpperCase() + type.slice(1) : type
  return repeated ? `${typeName}List` : typeName
}

function renderFile (packageName, { definitions, usesNullValue }, source) {
  const out = [`// Generated by pbjson: a lossless schema inferred from ${source}.`, 'syntax = "proto3";', '', `package ${packageName};`, '']
  if (usesNullValue) out.push('import "google/protobuf/struct.proto";', '')
  for (const { name, comment, lines, valueMessage } of definitions) {
    if (comment) out.push(comment)
    else if (valueMessage) out.push('// One JSON value: whichever field of kind is set, else the list.')
    out.push(...(lines.length ? [`message ${name} {`, ...lines, '}'] : [`message ${name} {}`]), '')
  }
  return out.join('\n')
}
