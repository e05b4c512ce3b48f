// protobufjs message type -> JSON Schema (2020-12) of the JSON this project holds its messages in,
// as lib/schema/adapter.js maps them: what a JSON service would validate where a protobuf one
// decodes. Each field takes the JSON kinds the project writes for its type (and, for 64-bit
// integers, proto3 JSON's decimal strings), never another kind.
import protobuf from 'protobufjs'
import { INT_TYPES, LONG_TYPES, acceptsNull, describe, fieldKeys, fieldsByInputKey, isNullValue, messageShape } from './adapter.js'
import { formatJsonPath, setOwn } from './json-exact.js'

const { Enum, Type } = protobuf

/** The dialect of every schema jsonSchemaOfType returns. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema'

// A schema under construction is a map from JSON Schema type ('null', 'boolean', 'integer',
// 'number', 'string', 'object', 'array') to the keywords that apply to values of that type only
// (minimum, pattern, properties, items...), or ANY for every JSON value. Because each keyword
// speaks of one type, a value message's kinds merge into one schema without anyOf, and null is
// allowed by adding a type: one `type` check per value, and one error for a value of a wrong type.
const ANY = null

const INT32 = { minimum: -(2 ** 31), maximum: 2 ** 31 - 1 }
const UINT32 = { minimum: 0, maximum: 2 ** 32 - 1 }
// 64-bit bounds as the nearest doubles: JSON.parse holds a number past 2^53 rounded, so these
// bounds refuse a value well outside the type (1e30), not one a unit past the last.
const INT64 = { minimum: -(2 ** 63), maximum: 2 ** 63 }
const UINT64 = { minimum: 0, maximum: 2 ** 64 }
const UNSIGNED = new Set(['uint32', 'fixed32', 'uint64', 'fixed64'])
// Non-finite doubles, which JSON numbers cannot be, as adapter.fromMessage writes them.
const NON_FINITE_TEXT = '^(NaN|-?Infinity)$'
// Base64, standard or URL-safe, padded or not: what Buffer.from(text, 'base64') reads.
const BASE64_TEXT = '^[A-Za-z0-9+/_-]*={0,2}$'
const INTEGER_KEY = '^-?\\d+$'

// Which JSON Schema types carry each kind of a value message (see VALUE_FIELDS in infer.js).
const KIND_TYPES = {
  null: ['null'],
  bool: ['boolean'],
  integer: ['integer', 'number'],
  number: ['number'],
  string: ['string'],
  object: ['object'],
  list: ['array']
}

/** The schema of one scalar value, by protobuf type. */
function scalarParts (type) {
  if (INT_TYPES.has(type)) return new Map([['integer', UNSIGNED.has(type) ? UINT32 : INT32]])
  if (LONG_TYPES.has(type)) {
    // proto3 JSON writes 64-bit integers as decimal strings, and the adapter reads them.
    const unsigned = UNSIGNED.has(type)
    return new Map([['integer', unsigned ? UINT64 : INT64], ['string', { pattern: unsigned ? '^\\d+$' : '^-?\\d+$' }]])
  }
  if (type === 'double' || type === 'float') return new Map([['number', {}], ['string', { pattern: NON_FINITE_TEXT }]])
  if (type === 'bool') return new Map([['boolean', {}]])
  if (type === 'string') return new Map([['string', {}]])
  if (type === 'bytes') return new Map([['string', { pattern: BASE64_TEXT }]])
  throw new TypeError(`no JSON Schema for protobuf type ${type}`)
}

/** The schema of an enum value: a name of the enum or, as the adapter also reads, its number. */
function enumParts (resolved) {
  if (isNullValue(resolved)) return new Map([['null', {}]])
  // Enum value names are identifiers: nothing in them needs escaping in a pattern.
  return new Map([['string', { pattern: `^(${Object.keys(resolved.values).join('|')})$` }], ['integer', INT32]])
}

/** Renders parts as a JSON Schema object: `type` (a string when one) and the keywords. */
function render (parts) {
  if (parts === ANY) return {}
  if (parts.has('integer') && parts.has('number')) {
    parts = new Map(parts)
    parts.delete('integer') // every number is taken: an integer's bounds would refuse doubles
  }
  const types = [...parts.keys()]
  return Object.assign({ type: types.length === 1 ? types[0] : types }, ...parts.values())
}

function withNull (parts) {
  return parts === ANY || parts.has('null') ? parts : new Map([...parts, ['null', {}]])
}

/** Builds the schema of one root type: object messages inline, those that contain themselves in $defs. */
class SchemaBuilder {
  defs = {}
  inlined = new Map() // object message -> its keywords, when it does not contain itself
  open = new Set() // object messages being built
  recursive = new Set()
  building = new Set() // value messages being built, to stop a recursive one

  // Inlined where used, as validators run inline code fastest; a message met again while it is
  // being built (TreeNode.child) is a $defs entry instead, and refers to itself.
  objectParts (type) {
    const name = type.fullName.slice(1)
    const ref = () => new Map([['object', { $ref: `#/$defs/${name}` }]])
    if (Object.hasOwn(this.defs, name)) return ref()
    if (this.open.has(type)) {
      this.recursive.add(type)
      return ref()
    }
    if (!this.inlined.has(type)) {
      this.open.add(type)
      const keywords = this.objectKeywords(type)
      this.open.delete(type)
      if (this.recursive.has(type)) {
        this.defs[name] = keywords
        return ref()
      }
      this.inlined.set(type, keywords)
    }
    return new Map([['object', this.inlined.get(type)]])
  }

  objectKeywords (type) {
    const properties = {}
    for (const [key, field] of fieldsByInputKey(type)) setOwn(properties, key, render(this.propertyParts(field)))
    const keywords = { properties }
    // proto2 `required`: present under one of the keys the field is read from, and not null.
    const required = type.fieldsArray.filter((field) => field.required).map((field) => readKeys(type, field))
    const single = required.filter((keys) => keys.length === 1).map(([key]) => key)
    const alternatives = required.filter((keys) => keys.length > 1)
      .map((keys) => ({ anyOf: keys.map((key) => ({ required: [key] })) }))
    if (single.length) keywords.required = single
    if (alternatives.length) keywords.allOf = alternatives
    return keywords
  }

  // A field as a key of its message: null means "not set" unless the field takes null as a value.
  propertyParts (field) {
    const parts = this.entryParts(field)
    return field.required || acceptsNull(field) ? parts : withNull(parts)
  }

  // The whole value of a field: an array for repeated, an object for a map, else one value.
  entryParts (field) {
    if (field.map) {
      const keywords = {}
      const values = render(this.valueParts(field))
      if (Object.keys(values).length) keywords.additionalProperties = values
      if (field.keyType === 'bool') keywords.propertyNames = { pattern: '^(true|false)$' }
      else if (field.keyType !== 'string') keywords.propertyNames = { pattern: INTEGER_KEY }
      return new Map([['object', keywords]])
    }
    if (field.repeated) {
      const items = render(this.valueParts(field))
      return new Map([['array', Object.keys(items).length ? { items } : {}]])
    }
    return this.valueParts(field)
  }

  valueParts (field) {
    field.resolve()
    const resolved = field.resolvedType
    if (resolved instanceof Enum) return enumParts(resolved)
    if (resolved instanceof Type) return this.messageParts(resolved)
    return scalarParts(field.type)
  }

  messageParts (type) {
    // Any JSON value is a google.protobuf.Value: said here, where following its fields would recurse.
    if (type.fullName === '.google.protobuf.Value') return ANY
    const shape = messageShape(type)
    if (shape.kind === 'unwrap') return this.entryParts(shape.field)
    if (shape.kind === 'object') return this.objectParts(type)
    if (this.building.has(type)) return ANY // a value message inside itself: only hand-written schemas do that
    this.building.add(type)
    try {
      return this.valueMessageParts(shape.fieldsByKind)
    } finally {
      this.building.delete(type)
    }
  }

  // One JSON value whose kind picks a field (adapter's kindCodec): each kind with a field takes
  // that field's schema for its JSON type; with a JSON text field every other value is taken too.
  valueMessageParts (fieldsByKind) {
    const parts = new Map()
    for (const [kind, types] of Object.entries(KIND_TYPES)) {
      const field = fieldsByKind[kind]
      if (!field) continue
      const fieldParts = this.entryParts(field)
      // An integer goes to the integer field; with none, to the number field.
      const jsonType = fieldParts === ANY ? types[0] : types.find((type) => fieldParts.has(type))
      if (jsonType && !parts.has(jsonType)) parts.set(jsonType, fieldParts === ANY ? {} : fieldParts.get(jsonType))
    }
    if (!fieldsByKind.text) return parts
    // JSON text holds what no other field does: every type, with the other fields' keywords.
    if (parts.size === 0) return ANY
    const others = Object.values(KIND_TYPES).flat().filter((type) => !parts.has(type))
    return new Map([...parts, ...others.map((type) => [type, {}])])
  }
}

/** Every key a field is read from, as fieldsByInputKey assigns them. */
function readKeys (type, field) {
  const keys = []
  for (const [key, owner] of fieldsByInputKey(type)) if (owner === field) keys.push(key)
  return keys.length ? keys : [fieldKeys(field).jsonKey]
}

/**
 * The JSON Schema (2020-12) of a message type's JSON, as this project holds it and
 * lib/schema/adapter.js maps it to and from protobuf:
 * - an object message is a JSON object; each field is read from its json_name, its declared name
 *   and its lowerCamelCase JSON name (fieldKeys); keys with no field are allowed, as protobuf
 *   skips unknown fields; null means "not set" except where null is a value; proto2 `required`
 *   fields must be present and not null;
 * - int32/sint32/sfixed32 are integers within 32 bits, uint32/fixed32 within 0..2^32-1;
 *   64-bit integers are integers (bounded to the nearest doubles of their range) or decimal
 *   strings (proto3 JSON's form); double and float are numbers, or "NaN", "Infinity",
 *   "-Infinity"; bool booleans; string strings; bytes base64 strings; enums a value's name or
 *   number (as the adapter reads), google.protobuf.NullValue null;
 * - repeated fields are arrays, maps objects (integer and bool keys as their text); value
 *   messages (inferred unions) one JSON value of the kinds they have fields for, JsonText and
 *   google.protobuf.Value any value, Struct any object, ListValue any array, wrappers their value.
 * Stricter than the adapter's toMessage where a typed decoder is: numbers in strings ("5" for an
 * int32, "1.5" for a double), non-integers in integer fields and integers out of their field's
 * range are refused, where the adapter would hand them to protobufjs to convert or truncate.
 * Object messages are inlined where they are used, except one that contains itself (TreeNode):
 * that one is a `$defs` entry, keyed by its full name, that refers to itself. The schema is plain
 * data: compile it with any 2020-12 validator.
 * @param {protobuf.Type} type a resolved message type: a built-in test's (proto/, loaded with
 *   keepCase) or a user's (lib/schema/compile.js, inferred or given)
 * @returns {object} the JSON Schema
 */
export function jsonSchemaOfType (type) {
  if (!(type instanceof Type)) throw new TypeError('expected a protobufjs Type, e.g. from compileSchema')
  const builder = new SchemaBuilder()
  const root = render(builder.messageParts(type))
  return { $schema: JSON_SCHEMA_DIALECT, ...root, ...(Object.keys(builder.defs).length ? { $defs: builder.defs } : {}) }
}

/** The JSON Schema type names a JSON value has: an integral number is both integer and number. */
function typesOf (value) {
  if (value === null) return ['null']
  if (Array.isArray(value)) return ['array']
  if (typeof value === 'number') return Number.isInteger(value) ? ['integer', 'number'] : ['number']
  return [typeof value]
}

const MAX_SHOWN = 80
const got = (value) => {
  const shown = describe(value)
  return `got ${shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN - 1)}…` : shown}`
}

/**
 * The first place where a JSON value breaks a schema from jsonSchemaOfType, and why: for the
 * error a validator's refusal becomes. Reads the schema as it goes (slow beside a compiled
 * validator: for refused values only), so its messages do not depend on the validator's.
 * @param {object} schema from jsonSchemaOfType
 * @param {*} value a JSON value, as JSON.parse gives it
 * @returns {{path: string, reason: string}|null} e.g. `$.orderId` and `must be string, got
 *   number 5`; null if the value is valid
 */
export function schemaViolation (schema, value) {
  const found = check(schema, schema, value, [])
  return found && { path: formatJsonPath(found.path), reason: found.reason }
}

function check (schema, node, value, path) {
  if (node.type !== undefined) {
    const types = [node.type].flat()
    if (!typesOf(value).some((type) => types.includes(type))) {
      // null stands for "not set" beside most types: name the types that carry a value.
      const named = types.length > 1 ? types.filter((type) => type !== 'null') : types
      return { path, reason: `must be ${named.join(' or ')}, ${got(value)}` }
    }
  }
  if (typeof value === 'number') {
    if (node.minimum !== undefined && value < node.minimum) return { path, reason: `must be >= ${node.minimum}, ${got(value)}` }
    if (node.maximum !== undefined && value > node.maximum) return { path, reason: `must be <= ${node.maximum}, ${got(value)}` }
  }
  if (typeof value === 'string' && node.pattern !== undefined && !new RegExp(node.pattern, 'u').test(value)) {
    return { path, reason: `must match ${node.pattern}, ${got(value)}` }
  }
  if (node.$ref !== undefined) {
    const found = check(schema, schema.$defs[node.$ref.slice('#/$defs/'.length)], value, path)
    if (found) return found
  }
  if (Array.isArray(value)) {
    for (let index = 0; node.items && index < value.length; index++) {
      const found = check(schema, node.items, value[index], [...path, index])
      if (found) return found
    }
    return null
  }
  return value !== null && typeof value === 'object' ? checkObject(schema, node, value, path) : null
}

function checkObject (schema, node, object, path) {
  const absent = (key) => !Object.hasOwn(object, key)
  const missing = (node.required ?? []).find(absent) ??
    (node.allOf ?? []).find(({ anyOf }) => anyOf.every(({ required }) => absent(required[0])))?.anyOf[0].required[0]
  if (missing !== undefined) return { path: [...path, missing], reason: 'required field missing' }
  const properties = node.properties ?? {}
  for (const key of Object.keys(object)) {
    if (node.propertyNames && !new RegExp(node.propertyNames.pattern, 'u').test(key)) {
      return { path: [...path, key], reason: `key must match ${node.propertyNames.pattern}` }
    }
    const property = Object.hasOwn(properties, key) ? properties[key] : node.additionalProperties
    const found = property && check(schema, property, object[key], [...path, key])
    if (found) return found
  }
  return null
}
