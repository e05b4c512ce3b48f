// JSON <-> protobufjs messages for any message type: inferred schemas (original keys in json_name,
// value messages, JSON text) and hand-written ones alike.
import protobuf from 'protobufjs'
import { UsageError } from '../errors.js'
import { VALUE_FIELDS } from './infer.js'
import { childPath, linkedPathText, parseJsonExact, setOwn, stringifyJsonExact } from './json-exact.js'

const { Enum, Type } = protobuf
const { Long } = protobuf.util

// Each message type gets a codec, built once and cached: { toProto(json, path, mode), fromProto(message) }.
// toProto returns SKIP for a value the field cannot take: strict mode (toMessage) throws instead,
// lenient mode (checkFidelity) leaves it out so that it shows up as a difference.

const SKIP = Symbol('skip')
const STRICT = { strict: true }
const LENIENT = { strict: false }
const codecs = new WeakMap()

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * A JSON value as an error message names it: `number 5`, `string "x"`, `an array`, `null`.
 * @param {*} value
 * @returns {string}
 */
export const describe = (value) => {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (['number', 'bigint', 'string', 'boolean'].includes(typeof value)) return `${typeof value} ${stringifyJsonExact(value)}`
  return typeof value === 'object' ? 'an object' : typeof value
}

function reject (mode, path, reason) {
  if (mode.strict) throw new UsageError(`${linkedPathText(path)}: ${reason}`)
  return SKIP
}

/** Integer as JSON: a number when exactly representable, else a BigInt. */
function integerToJson (value) {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value
  const number = value.toNumber() // a Long; exact whenever the result is a safe integer
  return Number.isSafeInteger(number) ? number : BigInt(value.toString())
}

/** Scalar types protobufjs holds as Long: JSON gives them as numbers, BigInt or decimal strings. */
export const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'])
/** 32-bit integer scalar types. */
export const INT_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32'])
const INTEGER_TEXT = /^-?\d+$/
const NUMBER_TEXT = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/
const NON_FINITE = new Set(['NaN', 'Infinity', '-Infinity'])

/** JSON -> protobufjs value for a scalar type, accepting the proto3 JSON forms (numbers as strings). */
function scalarToProto (type, value, path, mode) {
  const mismatch = () => reject(mode, path, `${type} field cannot hold ${describe(value)}`)
  if (LONG_TYPES.has(type)) {
    const unsigned = type === 'uint64' || type === 'fixed64'
    if (typeof value === 'number') return value
    if (typeof value === 'bigint' || (typeof value === 'string' && INTEGER_TEXT.test(value))) return Long.fromString(String(value), unsigned)
    return mismatch()
  }
  if (INT_TYPES.has(type) || type === 'double' || type === 'float') {
    if (typeof value === 'number') return value
    if (typeof value === 'bigint') return Number(value)
    if (typeof value === 'string' && (NUMBER_TEXT.test(value) || NON_FINITE.has(value))) return Number(value)
    return mismatch()
  }
  if (type === 'bool') return typeof value === 'boolean' ? value : mismatch()
  if (type === 'string') return typeof value === 'string' ? value : mismatch()
  if (type === 'bytes') return typeof value === 'string' ? Buffer.from(value, 'base64') : mismatch()
  return mismatch()
}

/** protobufjs value -> JSON for a scalar type: 64-bit integers as number or BigInt, bytes as base64. */
function scalarToJson (type, value) {
  if (LONG_TYPES.has(type)) return integerToJson(value)
  if (type === 'double' || type === 'float') return Number.isFinite(value) ? value : String(value)
  if (type === 'bytes') return Buffer.from(value).toString('base64')
  return value
}

/** Converter for the values of one field (one element, for repeated and map fields). */
function valueConverter (field) {
  const resolved = field.resolvedType
  if (resolved instanceof Enum) {
    if (isNullValue(resolved)) {
      return {
        toProto: (value, path, mode) => value === null ? 0 : reject(mode, path, `NullValue field cannot hold ${describe(value)}`),
        fromProto: () => null
      }
    }
    return {
      toProto: (value, path, mode) => {
        if (typeof value === 'string' && Object.hasOwn(resolved.values, value)) return resolved.values[value]
        if (Number.isInteger(value)) return value
        return reject(mode, path, `enum ${resolved.name} has no value ${describe(value)}`)
      },
      fromProto: (value) => resolved.valuesById[value] ?? value
    }
  }
  if (resolved instanceof Type) {
    return {
      toProto: (value, path, mode) => codecFor(resolved).toProto(value, path, mode),
      fromProto: (value) => codecFor(resolved).fromProto(value)
    }
  }
  return {
    toProto: (value, path, mode) => scalarToProto(field.type, value, path, mode),
    fromProto: (value) => scalarToJson(field.type, value)
  }
}

/** Whether an enum is google.protobuf.NullValue, whose one value is JSON null. */
export const isNullValue = (resolved) => resolved.fullName === '.google.protobuf.NullValue'

/**
 * How one field maps to JSON keys: it is written under the explicit json_name (inferred schemas
 * keep the original key there), else the name declared in the .proto; it is read from that key,
 * the declared name, protobufjs' name and the lowerCamelCase JSON name.
 * @param {protobuf.Field} field
 * @returns {{jsonKey: string, inputKeys: string[]}}
 */
export function fieldKeys (field) {
  const declaredName = field.protoName ?? field.name
  return {
    jsonKey: field.options?.json_name ?? declaredName,
    inputKeys: [declaredName, field.name, field.jsonName].filter(Boolean)
  }
}

/**
 * Which field each JSON key of a message's object reads into. Every field's own JSON key first:
 * another field's alternative name must not shadow it.
 * @param {protobuf.Type} type an object message
 * @returns {Map<string, protobuf.Field>}
 */
export function fieldsByInputKey (type) {
  const byKey = new Map(type.fieldsArray.map((field) => [fieldKeys(field).jsonKey, field]))
  for (const field of type.fieldsArray) {
    for (const key of fieldKeys(field).inputKeys) if (!byKey.has(key)) byKey.set(key, field)
  }
  return byKey
}

function fieldEntry (field) {
  const convert = valueConverter(field)
  const entry = {
    field,
    ...fieldKeys(field),
    hasPresence: field.hasPresence || field.resolvedType instanceof Type,
    acceptsNull: acceptsNull(field),
    toProto: convert.toProto,
    fromProto: convert.fromProto
  }
  if (field.repeated) {
    entry.toProto = (value, path, mode) => {
      if (!Array.isArray(value)) return reject(mode, path, `repeated field ${field.name} needs an array, got ${describe(value)}`)
      const items = []
      for (let index = 0; index < value.length; index++) {
        const item = convert.toProto(value[index], childPath(path, index), mode)
        if (item !== SKIP) items.push(item)
      }
      return items
    }
    entry.fromProto = (items) => Array.from(items ?? [], convert.fromProto)
  } else if (field.map) {
    entry.toProto = (value, path, mode) => {
      if (!isPlainObject(value)) return reject(mode, path, `map field ${field.name} needs an object, got ${describe(value)}`)
      const map = {}
      for (const key of Object.keys(value)) {
        const item = convert.toProto(value[key], childPath(path, key), mode)
        if (item !== SKIP) setOwn(map, key, item)
      }
      return map
    }
    entry.fromProto = (map) => {
      const object = {}
      for (const key of Object.keys(map ?? {})) setOwn(object, key, convert.fromProto(map[key]))
      return object
    }
  }
  return entry
}

/** Whether a field is set on a decoded message (own property: prototypes carry defaults). */
const isSet = (message, name) => Object.hasOwn(message, name) && message[name] != null

/** A message that stands for a JSON object: one key per field. */
function objectCodec (type) {
  const entryOf = new Map(type.fieldsArray.map((field) => [field, fieldEntry(field)]))
  const entries = [...entryOf.values()]
  const byKey = new Map([...fieldsByInputKey(type)].map(([key, field]) => [key, entryOf.get(field)]))
  return {
    toProto (json, path, mode) {
      if (!isPlainObject(json)) return reject(mode, path, `${type.fullName.slice(1)} needs an object, got ${describe(json)}`)
      const message = {}
      for (const key of Object.keys(json)) {
        const entry = byKey.get(key)
        const keyPath = childPath(path, key)
        if (!entry) {
          reject(mode, keyPath, `${type.fullName.slice(1)} has no field for key ${JSON.stringify(key)}`)
          continue
        }
        // proto3 JSON reads null as "not set"; schemas that keep nulls use NullValue or a value message.
        if (json[key] === null && !entry.acceptsNull) continue
        const value = entry.toProto(json[key], keyPath, mode)
        if (value !== SKIP) setOwn(message, entry.field.name, value)
      }
      return message
    },
    fromProto (message) {
      const json = {}
      for (const entry of entries) {
        const { name } = entry.field
        if (entry.field.repeated || entry.field.map) setOwn(json, entry.jsonKey, entry.fromProto(message[name]))
        else if (isSet(message, name)) setOwn(json, entry.jsonKey, entry.fromProto(message[name]))
        else if (!entry.hasPresence) {
          setOwn(json, entry.jsonKey, entry.fromProto(message[name] ?? entry.field.typeDefault))
        }
      }
      return json
    }
  }
}

/**
 * Whether JSON null is a value of a field (NullValue, google.protobuf.Value, a value message with
 * a null or JSON text field) rather than "not set", as it is for every other field.
 * @param {protobuf.Field} field
 * @returns {boolean}
 */
export function acceptsNull (field) {
  const resolved = field.resolvedType
  if (!resolved || field.repeated || field.map) return false
  if (isNullValue(resolved) || resolved.fullName === '.google.protobuf.Value') return true
  // protoName: protobufjs renames fields to camelCase unless keepCase is set.
  return resolved instanceof Type && isValueMessage(resolved) &&
    resolved.fieldsArray.some((candidate) =>
      [VALUE_FIELDS.null, VALUE_FIELDS.text].includes(candidate.protoName ?? candidate.name))
}

const VALUE_FIELD_NAMES = new Set(Object.values(VALUE_FIELDS))

/**
 * Whether a message is an inferred value message, told by its shape alone (no custom option, so
 * the schema loads in any protobuf toolchain): every field named for a JSON kind (VALUE_FIELDS),
 * and two or more alternatives in a oneof named `kind`, or one alternative beside the list, or
 * the JSON text alone.
 */
function isValueMessage (type) {
  const fields = type.fieldsArray
  const declared = (field) => field.protoName ?? field.name
  if (fields.length === 0 || !fields.every((field) => VALUE_FIELD_NAMES.has(declared(field)))) return false
  const alternatives = fields.filter((field) => !field.repeated)
  if (alternatives.length >= 2) return alternatives.every((field) => field.partOf?.name === 'kind')
  return alternatives.length === 0 || fields.length === 2 || declared(alternatives[0]) === VALUE_FIELDS.text
}

/** JSON kind that picks a value message field; integers are those a double or an int field tell apart. */
function jsonKind (value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'list'
  switch (typeof value) {
    case 'number': return Number.isSafeInteger(value) && !Object.is(value, -0) ? 'integer' : 'number'
    case 'bigint': return 'integer'
    case 'boolean': return 'bool'
    case 'object': return 'object'
    default: return typeof value
  }
}

/**
 * A message standing for one JSON value of several possible kinds: the field for the value's kind
 * is set; when none is, the repeated `list` field (if any) is the value.
 * @param {protobuf.Type} type the message
 * @param {Object<string, protobuf.Field>} fieldsByKind a field per JSON kind (see VALUE_FIELDS)
 */
function kindCodec (type, fieldsByKind) {
  const entries = {}
  for (const [kind, field] of Object.entries(fieldsByKind)) if (field) entries[kind] = fieldEntry(field)
  const alternatives = Object.values(entries).filter((entry) => !entry.field.repeated)
  return {
    toProto (json, path, mode) {
      const kind = jsonKind(json)
      const entry = entries[kind] ?? (kind === 'integer' ? entries.number : undefined)
      if (entry) {
        const value = entry.toProto(json, path, mode)
        return value === SKIP ? SKIP : { [entry.field.name]: value }
      }
      if (entries.text) return { [entries.text.field.name]: stringifyJsonExact(json) }
      return reject(mode, path, `${type.fullName.slice(1)} cannot hold ${describe(json)}`)
    },
    fromProto (message) {
      const set = alternatives.find((entry) => isSet(message, entry.field.name))
      if (!set) {
        return entries.list?.field.repeated ? entries.list.fromProto(message[entries.list.field.name]) : undefined
      }
      return set === entries.text ? parseJsonExact(message[set.field.name]) : set.fromProto(message[set.field.name])
    }
  }
}

/** A message that stands for the value of its field number 1: Struct, ListValue, the *Value wrappers. */
function unwrapCodec (type) {
  const entry = fieldEntry(type.fieldsById[1])
  const { name } = entry.field
  return {
    toProto (json, path, mode) {
      const value = entry.toProto(json, path, mode)
      return value === SKIP ? SKIP : { [name]: value }
    },
    fromProto: (message) => entry.fromProto(message[name] ?? entry.field.typeDefault)
  }
}

// Well-known types as in the proto3 JSON mapping. Fields are found by number because the copies
// bundled with protobufjs name them in camelCase. google.protobuf.Value holds numbers as doubles,
// so a big integer in it comes back rounded (and checkFidelity says so).
const UNWRAPPED_TYPES = new Set(['Struct', 'ListValue', 'DoubleValue', 'FloatValue', 'Int64Value', 'UInt64Value', 'Int32Value', 'UInt32Value', 'BoolValue', 'StringValue', 'BytesValue'].map((name) => `.google.protobuf.${name}`))
const PROTOBUF_VALUE_FIELDS = { null: 1, number: 2, string: 3, bool: 4, object: 5, list: 6 }

/**
 * What JSON a message type stands for, as the adapter maps it: `unwrap`, the value of its field
 * number 1 (Struct, ListValue, the wrappers); `value`, one JSON value whose kind picks the field
 * (google.protobuf.Value and inferred value messages: fieldsByKind has a field, or undefined, per
 * key of VALUE_FIELDS); else `object`, a JSON object with a key per field.
 * @param {protobuf.Type} type
 * @returns {{kind: 'unwrap', field: protobuf.Field}|{kind: 'value', fieldsByKind: Object<string, protobuf.Field|undefined>}|{kind: 'object'}}
 */
export function messageShape (type) {
  for (const field of type.fieldsArray) field.resolve()
  if (UNWRAPPED_TYPES.has(type.fullName)) return { kind: 'unwrap', field: type.fieldsById[1] }
  if (type.fullName === '.google.protobuf.Value') {
    return { kind: 'value', fieldsByKind: Object.fromEntries(Object.entries(PROTOBUF_VALUE_FIELDS).map(([kind, id]) => [kind, type.fieldsById[id]])) }
  }
  if (isValueMessage(type)) {
    const byDeclaredName = new Map(type.fieldsArray.map((field) => [field.protoName ?? field.name, field]))
    return { kind: 'value', fieldsByKind: Object.fromEntries(Object.entries(VALUE_FIELDS).map(([kind, name]) => [kind, byDeclaredName.get(name)])) }
  }
  return { kind: 'object' }
}

function codecFor (type) {
  let codec = codecs.get(type)
  if (codec) return codec
  // Recursive types reach their own codec while it is being built: cache a forwarder first.
  codec = {}
  codecs.set(type, codec)
  const shape = messageShape(type)
  if (shape.kind === 'unwrap') Object.assign(codec, unwrapCodec(type))
  else if (shape.kind === 'value') Object.assign(codec, kindCodec(type, shape.fieldsByKind))
  else Object.assign(codec, objectCodec(type))
  return codec
}

function assertType (type) {
  if (!(type instanceof Type)) throw new TypeError('expected a protobufjs Type, e.g. from compileSchema')
}

/**
 * JSON <-> protobufjs message conversion for a message type: inferred schemas (original keys in
 * json_name, value messages, JSON text) and hand-written ones alike. JSON keys are a field's
 * json_name if declared, else its .proto name (the lowerCamelCase JSON name is accepted as input).
 * - toMessage(json): a plain object for type.encode. 64-bit integers are numbers when safe and
 *   Long otherwise (input may be number, BigInt or a decimal string); enums accept names or
 *   numbers; bytes take base64; well-known Struct/Value/ListValue/NullValue and wrappers follow
 *   the proto3 JSON mapping; null on a field that cannot hold null means "not set".
 *   Throws UsageError naming the JSON path for a key with no field or a value of the wrong kind.
 *   Values that fit but lose precision (a double in a float field) pass; checkFidelity reports them.
 * - fromMessage(decoded): JSON with the schema's keys. Fields with presence appear only when set;
 *   implicit-presence scalars appear with their default; repeated fields always (possibly []).
 *   64-bit integers are numbers when safe, else BigInt; enums their names; bytes base64;
 *   non-finite doubles "NaN" / "Infinity" / "-Infinity".
 * @param {protobuf.Type} type message type, e.g. from compileSchema
 * @param {{strict?: boolean}} [options] strict (the default) throws on a value a field cannot take;
 *   lenient leaves it out, so that a fidelity check reports it as a difference
 * @returns {{ toMessage: (json: *) => object, fromMessage: (decoded: object) => * }}
 */
export function createAdapter (type, { strict = true } = {}) {
  assertType(type)
  const codec = codecFor(type)
  const mode = strict ? STRICT : LENIENT
  return {
    toMessage: (json) => {
      const message = codec.toProto(json, null, mode)
      return message === SKIP ? {} : message
    },
    fromMessage: (decoded) => codec.fromProto(decoded)
  }
}
