// What the redis and nats brokers carry (lib/server/broker.js): every topic's frames on one
// channel, each frame in a small envelope naming its topic and kind.

/**
 * Frames in the envelope the redis and nats brokers carry, every topic on one channel:
 * `[origin][flags: 1 byte, bit 0 binary][topic length: 2 bytes][topic, UTF-8][frame]`. The origin
 * (empty when the broker itself never echoes a frame to its publisher) lets a process skip its own.
 */
export class Envelopes {
  /** @param {Buffer} [origin] this process's id, the same length in every process */
  constructor (origin = Buffer.alloc(0)) {
    this.origin = origin
    /** Each topic's envelope start, made once: a publish only copies. */
    this.headers = new Map()
  }

  /**
   * @param {string} topic
   * @param {Buffer} frame
   * @param {boolean} isBinary
   * @returns {Buffer}
   */
  wrap (topic, frame, isBinary) {
    let header = this.headers.get(topic)
    if (header === undefined) {
      const name = Buffer.from(topic)
      header = Buffer.concat([this.origin, Buffer.alloc(3), name])
      header.writeUInt16BE(name.length, this.origin.length + 1)
      this.headers.set(topic, header)
    }
    const envelope = Buffer.allocUnsafe(header.length + frame.length)
    header.copy(envelope)
    envelope[this.origin.length] = isBinary ? 1 : 0
    frame.copy(envelope, header.length)
    return envelope
  }

  /**
   * Hands an envelope's topic and frame (a view, not a copy) to `handler`, unless this process sent it.
   * @param {Buffer} envelope
   * @param {(topic: string, frame: Buffer, isBinary: boolean) => void} handler
   */
  unwrap (envelope, handler) {
    const at = this.origin.length
    if (at > 0 && envelope.compare(this.origin, 0, at, 0, at) === 0) return
    const end = at + 3 + envelope.readUInt16BE(at + 1)
    handler(envelope.toString('utf8', at + 3, end), envelope.subarray(end), envelope[at] === 1)
  }
}

/** The one channel (Redis) or subject (NATS) every topic's frames travel on. */
export const FANOUT_CHANNEL = 'wsbench.fanout'
