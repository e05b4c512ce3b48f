// CBOR (RFC 8949) through cbor-x: field names in every message, like JSON, but binary; no schema
// on either side. Records (cbor-x's extension that sends keys once per structure) are off:
// standard CBOR that any other implementation reads, as a user's other services would.
import { Encoder } from 'cbor-x'
import { plainCodec } from '../registry.js'

export const format = 'cbor'
export const binary = true

const cbor = new Encoder({ useRecords: false, mapsAsObjects: true })

/** CBOR through cbor-x. */
export const cborCodec = plainCodec(format, binary, (value) => cbor.encode(value), (frame) => cbor.decode(frame))

/**
 * CBOR does not depend on the test.
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = () => cborCodec
