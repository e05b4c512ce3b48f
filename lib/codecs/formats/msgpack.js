// MessagePack through msgpackr: field names in every message, like JSON, but binary; no schema on
// either side. Records (msgpackr's extension that sends keys once per structure) are off: standard
// MessagePack that any other implementation reads, as a user's other services would.
import { Packr } from 'msgpackr'
import { plainCodec } from '../registry.js'

export const format = 'msgpack'
export const binary = true

const packr = new Packr({ useRecords: false })

/** MessagePack through msgpackr. */
export const msgpackCodec = plainCodec(format, binary, (value) => packr.pack(value), (frame) => packr.unpack(frame))

/**
 * MessagePack does not depend on the test.
 * @returns {import('../registry.js').Codec}
 */
export const codecFor = () => msgpackCodec
