import * as msgpack from '../../../lib/codecs/formats/msgpack.js'
import { testSelfDescribing } from './self-describing.js'

// A map of one entry with a 16-bit count (msgpackr writes objects so); an array of two.
testSelfDescribing(msgpack, msgpack.msgpackCodec, { object: [0xde, 0x00, 0x01, 0xa1, 0x61, 0x01], array: [0x92, 0x01, 0xa1, 0x61] })
