// MessagePack through msgpackr: field names in every message, like JSON, but binary; no schema on
// either side. Records (msgpackr's extension that sends keys once per structure) are off: standard
// MessagePack that any other implementation reads, as a user's other services would.
import { Packr } from 'msgpackr'

export const format = 'msgpack'
export const binary = true

const packr = new Packr({ useRecords: false })

/** MessagePack through msgpackr. */
export const msgpackCodec = Object.freeze({
  name: format,
  binary,
  prepare: (plain) => plain,
  encode: (value) => packr.pack(value),
  decode: (frame) => packr.unpack(frame),
  toPlain: (value) => value
})

/**
 * MessagePack does not depend on the test.
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = () => msgpackCodec
