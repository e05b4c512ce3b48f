// Apache Avro through avsc, with a schema derived from the payload (lib/schema/shape.js): records for
// objects, arrays, long for integers, double for other numbers, unions with null where null was
// seen. Avro has no "absent": a key that some objects lack comes back as null, and the fidelity
// check reports it.
import avro from 'avsc'
import { UsageError } from '../../errors.js'
import { kindOf, learnShape } from '../../schema/shape.js'

export const format = 'avro'
export const binary = true
/** The server would need the writer's schema too, which only the client could derive. */
export const customPayloads = false

const AVRO_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/**
 * An Avro schema for a shape.
 * @param {import('../../schema/shape.js').Shape} shape
 * @param {string} path JSON path, for names and errors
 * @param {{count: number}} names record name counter (Avro names must be unique)
 * @returns {object|string}
 */
export function avroSchemaOf (shape, path = '$', names = { count: 0 }) {
  const kind = kindOf(shape)
  if (!kind) return 'null' // only empty arrays were seen here
  if (kind === 'mixed') throw new UsageError(`avro: ${path} holds several kinds of value; Avro needs one type per field`)
  let type
  switch (kind) {
    case 'null': return 'null'
    case 'integer': type = 'long'; break
    case 'number': type = 'double'; break
    case 'array': type = { type: 'array', items: avroSchemaOf(shape.array.element, `${path}[]`, names) }; break
    case 'object':
      type = {
        type: 'record',
        name: `Record${names.count++}`,
        fields: [...shape.object.keys].map(([key, { shape: child, count }]) => {
          if (!AVRO_NAME.test(key)) throw new UsageError(`avro: the key ${JSON.stringify(key)} at ${path} is not a valid Avro field name`)
          const fieldType = avroSchemaOf(child, `${path}.${key}`, names)
          // Absent keys can only be carried as null.
          const optional = count < shape.object.instances
          return optional && !child.null && fieldType !== 'null' ? { name: key, type: ['null', fieldType], default: null } : { name: key, type: fieldType }
        })
      }
      break
    default: type = kind // boolean, string
  }
  return shape.null ? ['null', type] : type
}

/**
 * The Avro codec for a built-in test.
 * @param {import('../registry.js').CodecTest} test
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = (test) => avroCodec(test.messages)

/**
 * The Avro codec for some payloads.
 * @param {object[]} payloads the test's plain payloads, to derive the one schema that fits them all from
 * @returns {import('../registry.js').Codec}
 */
export function avroCodec (payloads) {
  const type = avro.Type.forSchema(avroSchemaOf(learnShape(payloads)), { typeHook: boundedArrays })
  return Object.freeze({
    name: format,
    binary,
    prepare: (plain) => plain,
    encode: (value) => type.toBuffer(value),
    decode: (frame) => type.fromBuffer(frame),
    toPlain: plainCopy
  })
}

/** avsc decodes records as instances of generated classes; reports and checks want plain objects. */
function plainCopy (value) {
  if (Array.isArray(value)) return value.map(plainCopy)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [key, plainCopy(child)]))
}

// avsc reads past the end of a frame and checks only once it is done, so a random frame that
// declares an array of billions of items makes it build them all (700 MB and 3 s for one 150-byte
// frame in the server fuzz test). No item of these schemas' arrays is encoded in zero bytes, so a
// block can never hold more items than the bytes left: a larger count is refused up front.
class BoundedArrayType extends avro.types.ArrayType {
  /** avsc's ArrayType read (with its preallocation of the first block), bounded by the frame. */
  _read (tap) {
    let items
    let index = 0
    let count
    while ((count = tap.readLong())) {
      if (count < 0) {
        count = -count
        tap.skipLong() // the block's byte size
      }
      if (count > tap.buf.length - tap.pos) throw new Error(`an array block of ${count} items in the ${tap.buf.length - tap.pos} bytes left`)
      items ??= new Array(count)
      while (count--) items[index++] = this.itemsType._read(tap)
    }
    return items ?? []
  }
}

const boundedArrays = (schema, options) => schema?.type === 'array' ? new BoundedArrayType(schema, options) : undefined
