// permessage-deflate as ws does it (raw deflate, a sync flush after each message, the trailing
// 00 00 ff ff dropped): each message alone, as with no context takeover or the first message,
// and a stream through one compressor, as with context takeover (ws's default), where each
// message may refer back to the previous 32 KiB.
import zlib from 'node:zlib'

/** The 4 bytes a sync flush ends with, which permessage-deflate leaves off the wire. */
const FLUSH_TAIL = 4

/**
 * One message deflated alone, in a fresh context.
 * @param {Uint8Array} frame
 * @returns {number} bytes
 */
export const deflatedAlone = (frame) => zlib.deflateRawSync(frame, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length - FLUSH_TAIL

/**
 * Each message's deflated size when all of them go through one compressor in order, as one
 * connection with context takeover sends them.
 * @param {Uint8Array[]} frames
 * @returns {Promise<number[]>} bytes, one per frame
 */
export async function deflatedInTurn (frames) {
  const deflate = zlib.createDeflateRaw()
  let size = 0
  deflate.on('data', (chunk) => { size += chunk.length })
  const sizes = []
  for (const frame of frames) {
    deflate.write(frame)
    await new Promise((resolve) => deflate.flush(zlib.constants.Z_SYNC_FLUSH, resolve))
    sizes.push(size - FLUSH_TAIL)
    size = 0
  }
  deflate.close()
  return sizes
}
