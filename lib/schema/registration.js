// A schema a client registers (a protobuf connection with its own payload): compiled on the server
// under a size limit, through a cache so a thousand connections compile it once.
import { createHash } from 'node:crypto'
import { UsageError } from '../errors.js'
import { REGISTRATION_PREFIX, parseRegistration } from '../protocol.js'
import { compileSchema } from './compile.js'

/**
 * Reads a registration frame on the server: compiles the schema under a size limit, through a
 * cache keyed by its hash so a thousand connections compile it once.
 * @param {Buffer} frame
 * @param {number} maxSchemaBytes
 * @param {Map<string, import('protobufjs').Type>} cache
 * @returns {import('protobufjs').Type}
 * @throws {UsageError} naming what is wrong, for the ERR reply
 */
export function compileRegistration (frame, maxSchemaBytes, cache) {
  if (frame.length > maxSchemaBytes + 1024) throw new UsageError(`schema registration is ${frame.length} bytes, more than the ${maxSchemaBytes} allowed (--max-schema-bytes)`)
  const text = frame.toString('utf8')
  const registration = parseRegistration(text)
  if (!registration) throw new UsageError(`expected a schema registration first: "${REGISTRATION_PREFIX}<type>\\n<.proto text>"`)
  const { typeName, protoText } = registration
  if (Buffer.byteLength(protoText) > maxSchemaBytes) throw new UsageError(`schema is ${Buffer.byteLength(protoText)} bytes, more than the ${maxSchemaBytes} allowed (--max-schema-bytes)`)
  const key = createHash('sha256').update(text).digest('hex')
  if (!cache.has(key)) {
    if (cache.size >= 100) cache.delete(cache.keys().next().value) // bounded: oldest out
    cache.set(key, compileSchema(protoText, typeName, { filename: 'registered schema' }))
  }
  return cache.get(key)
}
