import * as cbor from '../../../lib/codecs/formats/cbor.js'
import { testSelfDescribing } from './self-describing.js'

// A map of one entry with a 16-bit count (cbor-x writes objects so); an array of two.
testSelfDescribing(cbor, cbor.cborCodec, { object: [0xb9, 0x00, 0x01, 0x61, 0x61, 0x01], array: [0x82, 0x01, 0x61, 0x61] })
