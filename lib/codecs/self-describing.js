// Schemaless binary formats: MessagePack (msgpackr) and CBOR (cbor-x). Both carry field names in
// every message, like JSON, but as binary; neither needs a schema on either side.
import { Packr } from 'msgpackr'
import { Encoder } from 'cbor-x'

// Records (a msgpackr/cbor-x extension that sends keys once per structure) are off: standard
// MessagePack and CBOR that any other implementation reads, as a user's other services would.
const packr = new Packr({ useRecords: false })
const cbor = new Encoder({ useRecords: false, mapsAsObjects: true })

/**
 * MessagePack or CBOR: neither depends on the test.
 * @param {object} test
 * @param {'msgpack'|'cbor'} format
 * @returns {import('./registry.js').Codec}
 */
export const codecFor = (test, format) => format === 'cbor' ? cborCodec : msgpackCodec

/** MessagePack through msgpackr. */
export const msgpackCodec = Object.freeze({
  name: 'msgpack',
  binary: true,
  needsSchema: false,
  prepare: (plain) => plain,
  encode: (value) => packr.pack(value),
  decode: (frame) => packr.unpack(frame),
  toPlain: (value) => value
})

/** CBOR (RFC 8949) through cbor-x. */
export const cborCodec = Object.freeze({
  name: 'cbor',
  binary: true,
  needsSchema: false,
  prepare: (plain) => plain,
  encode: (value) => cbor.encode(value),
  decode: (frame) => cbor.decode(frame),
  toPlain: (value) => value
})
