// The shape of a JSON document, learned from every value in it: what schema-based formats (JSON
// Schema for fast-json-stringify, Avro) are derived from. Arrays of objects get the union of their
// keys; a key some objects lack is optional; null makes a type nullable; integers and other
// numbers together are numbers; anything else mixed is 'mixed' (no single schema type).

/**
 * @typedef {object} Shape
 * @property {'null'|'boolean'|'integer'|'number'|'string'|'array'|'object'|'mixed'} kind
 * @property {boolean} nullable null was seen beside another kind
 * @property {Shape} [items] arrays: every element's shape merged (absent when every array was empty)
 * @property {Map<string, {shape: Shape, optional: boolean}>} [fields] objects, keys in first-seen order
 */

/**
 * The shape of a JSON value.
 * @param {unknown} value
 * @returns {Shape}
 */
export function shapeOf (value) {
  if (value === null) return { kind: 'null', nullable: true }
  if (Array.isArray(value)) return { kind: 'array', nullable: false, items: value.map(shapeOf).reduce(mergeShapes, undefined) }
  switch (typeof value) {
    case 'boolean': return { kind: 'boolean', nullable: false }
    case 'number': return { kind: Number.isInteger(value) ? 'integer' : 'number', nullable: false }
    case 'bigint': return { kind: 'integer', nullable: false }
    case 'string': return { kind: 'string', nullable: false }
    default: {
      const fields = new Map()
      for (const [key, child] of Object.entries(value)) fields.set(key, { shape: shapeOf(child), optional: false })
      return { kind: 'object', nullable: false, fields }
    }
  }
}

/**
 * Merges two shapes seen at the same place.
 * @param {Shape|undefined} a
 * @param {Shape|undefined} b
 * @returns {Shape|undefined}
 */
export function mergeShapes (a, b) {
  if (!a) return b
  if (!b) return a
  const nullable = a.nullable || b.nullable
  if (a.kind === 'null') return { ...b, nullable: true }
  if (b.kind === 'null') return { ...a, nullable: true }
  if (a.kind === b.kind) {
    if (a.kind === 'array') return { kind: 'array', nullable, items: mergeShapes(a.items, b.items) }
    if (a.kind === 'object') return { kind: 'object', nullable, fields: mergeFields(a.fields, b.fields) }
    return { kind: a.kind, nullable }
  }
  const numbers = new Set([a.kind, b.kind])
  if (numbers.size === 2 && numbers.has('integer') && numbers.has('number')) return { kind: 'number', nullable }
  return { kind: 'mixed', nullable }
}

function mergeFields (a, b) {
  const fields = new Map()
  for (const [key, field] of a) {
    const other = b.get(key)
    const optional = field.optional || !other || other.optional
    fields.set(key, { shape: mergeShapes(field.shape, other?.shape), optional })
  }
  for (const [key, field] of b) if (!a.has(key)) fields.set(key, { ...field, optional: true })
  return fields
}
