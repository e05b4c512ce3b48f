// What a load run sends and how it judges what comes back, as the two functions a phase is given:
// the next frame (the next payload, encoded now, or a down request) and the judge of a reply.
import { Sender } from 'ws'
import { ACK, DOWN_REQUEST, FANOUT_HEADER_BYTES, fanoutHeader, isErrorReply } from '../protocol.js'
import { isPrintableText, printable } from '../display.js'

/** What a `down` client sends for each message, as a frame ready to send. */
const DOWN_REQUEST_FRAME = Buffer.from(DOWN_REQUEST)

/** WebSocket opcodes (RFC 6455 5.2). */
const TEXT = 1
const BINARY = 2

/** Said with a binary or unprintable reply where ACK was expected. */
const ECHO_HINT = ' (an echo server sends each message back: run with --ack any)'

/** Error replies kept for the report: the first few say what went wrong. */
const KEPT_ERROR_REPLIES = 5

/**
 * How a run's channels send what its frame source gives (see Channel#send): as binary or text
 * frames through ws, or, framed, as whole WebSocket frames written to the socket as they are.
 * @param {import('../codecs/registry.js').Codec} codec
 * @param {'up'|'down'|'echo'|'fanout'} direction
 * @param {{preencode?: boolean, compress?: boolean}} load framed only when pre-encoded and not
 *   compressed: permessage-deflate compresses each message as it goes
 * @returns {{binary: boolean, framed: boolean}}
 */
export function sendOptions (codec, direction, { preencode = false, compress = false } = {}) {
  const binary = direction === 'down' ? false : codec.binary
  return { binary, framed: preencode && !compress && direction !== 'fanout' }
}

/**
 * One complete client frame of `bytes`, masked with a key drawn now, framed by ws's own Sender. A
 * frame framed once and sent many times saves the generator masking every message anew (a quarter
 * of its CPU at test 3); the key stays random, as the server must unmask it as it would any
 * client's (ws skips unmasking an all-zero key).
 * @param {Uint8Array} bytes
 * @param {boolean} binary
 * @returns {Buffer}
 */
export function wireFrame (bytes, binary) {
  const options = { fin: true, opcode: binary ? BINARY : TEXT, mask: true, readOnly: true, rsv1: false }
  return Buffer.concat(Sender.frame(bytes, options))
}

/**
 * The frames of a run, one per call: the payloads in the codec's own form, encoded in turn (the
 * cost measured), cycling; the same small request when the server sends the payload (down); or
 * for a fan-out publisher, each payload behind the header that numbers the publish and says when
 * it was due (warm-up and measured publishes numbered apart, each from 0).
 * @param {import('../codecs/registry.js').Codec} codec
 * @param {unknown[]} natives the payloads, prepared by the codec
 * @param {'up'|'down'|'echo'|'fanout'} direction
 * @param {boolean} [preencode] encode every payload once, up front, and send those bytes in turn: the
 *   generator's CPU is then sending and receiving only (capacity's probes, which measure the server)
 * @param {{binary: boolean, framed: boolean}} [options] how they are sent (sendOptions): framed,
 *   each is a whole WebSocket frame (wireFrame)
 * @returns {(scheduledAt: number, measured: boolean) => (Buffer|Uint8Array|string)} scheduledAt in
 *   performance.now() ms, when the message is due
 */
export function frameSource (codec, natives, direction, preencode = false, options = sendOptions(codec, direction)) {
  if (direction === 'down') {
    const request = options.framed ? wireFrame(DOWN_REQUEST_FRAME, false) : DOWN_REQUEST_FRAME
    return () => request
  }
  let cursor = 0
  if (preencode && direction !== 'fanout') {
    // Text too as bytes: ws would otherwise turn each string into a new Buffer.
    const frames = natives.map((native) => {
      const encoded = codec.encode(native)
      const bytes = typeof encoded === 'string' ? Buffer.from(encoded) : encoded
      return options.framed ? wireFrame(bytes, options.binary) : bytes
    })
    return () => {
      const frame = frames[cursor]
      cursor = cursor + 1 === frames.length ? 0 : cursor + 1
      return frame
    }
  }
  const nextPayload = () => {
    const native = natives[cursor]
    cursor = cursor + 1 === natives.length ? 0 : cursor + 1
    return codec.encode(native)
  }
  if (direction !== 'fanout') return nextPayload
  const published = { warmup: 0, measured: 0 }
  return (scheduledAt, measured) => {
    const seq = measured ? published.measured++ : published.warmup++
    const header = fanoutHeader(measured, seq, (performance.timeOrigin + scheduledAt) * 1000)
    const payload = nextPayload()
    if (typeof payload === 'string') return header + payload
    const frame = Buffer.allocUnsafe(FANOUT_HEADER_BYTES + payload.length)
    frame.write(header, 0, 'latin1')
    frame.set(payload, FANOUT_HEADER_BYTES)
    return frame
  }
}

/**
 * The judge of replies: whether a reply completes its message. `ACK` or the --ack text (up),
 * anything (--ack any), or a payload that decodes (down, echo; decoding is part of the round trip
 * measured). Anything else is an error reply, and the first few are kept in `errorReplies`.
 * @param {{codec: import('../codecs/registry.js').Codec, direction: string, ack?: {any: boolean}|{text: string}}} rules
 * @param {string[]} errorReplies where the first few error replies are kept, shown safely
 * @returns {(data: Buffer, isBinary: boolean) => boolean}
 */
export function replyJudge ({ codec, direction, ack }, errorReplies) {
  if (ack?.any) return () => true
  const expectsPayload = direction !== 'up' && direction !== 'fanout' // a publish is acknowledged
  const ackText = Buffer.from(ack?.text ?? ACK)
  const keep = (text) => {
    if (errorReplies.length < KEPT_ERROR_REPLIES) errorReplies.push(text)
    return false
  }
  return (data, isBinary) => {
    if (!expectsPayload) {
      if (!isBinary && data.equals(ackText)) return true
    } else if (isBinary || !isErrorReply(data)) {
      try {
        codec.decode(data)
        return true
      } catch (err) {
        return keep(`client decode failed: ${err.message}`)
      }
    }
    // Shown safely: a binary reply as its size and first bytes; where ACK was expected, a binary
    // reply is most likely the message sent back by an echo server.
    const hint = !expectsPayload && !isPrintableText(data) ? ECHO_HINT : ''
    return keep(`${printable(data)}${hint}`)
  }
}
