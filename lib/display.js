// How things read on screen: numbers formatted the same in every report, and received bytes shown
// safely on one line. No Node.js imports: the browser page uses it too.

/**
 * Rounds to a number of decimal places.
 * @param {number} value
 * @param {number} digits
 * @returns {number}
 */
export function round (value, digits) {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

/**
 * A whole number with thousands separators: `12,850,022`.
 * @param {number} value
 * @returns {string}
 */
export const int = (value) => Math.round(value).toLocaleString('en-US')

/**
 * A rate per second: whole numbers, with one decimal below 100 so slow runs still compare.
 * @param {number} value
 * @returns {string}
 */
export const perSecond = (value) => value < 100 ? value.toFixed(1) : int(value)

/**
 * Milliseconds with microsecond resolution: `0.123`.
 * @param {number} value
 * @returns {string}
 */
export const ms = (value) => value.toFixed(3)

/**
 * A byte count in B, KiB or MiB.
 * @param {number} bytes
 * @returns {string}
 */
export function size (bytes) {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

/** Bytes of a binary or garbled frame shown in hex: enough to recognise it, never a screenful. */
const HEX_PREFIX_BYTES = 16

/** C0 and C1 control characters (tab aside), DEL, and the replacement character of invalid UTF-8. */
const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\ufffd]/ // eslint-disable-line no-control-regex

/**
 * Whether bytes are UTF-8 text that prints on one line (tabs allowed).
 * @param {Uint8Array} bytes
 * @returns {boolean}
 */
export function isPrintableText (bytes) {
  return !UNPRINTABLE.test(new TextDecoder().decode(bytes))
}

/**
 * A received frame as one safe line: printable UTF-8 text as itself (cut at `maxLength`), anything
 * else as its size and a short hex prefix, so a binary reply never writes control characters or
 * line breaks to a terminal.
 * @param {Uint8Array} bytes
 * @param {number} [maxLength] longest text shown, in characters
 * @returns {string}
 */
export function printable (bytes, maxLength = 300) {
  if (isPrintableText(bytes)) {
    const text = new TextDecoder().decode(bytes)
    return text.length > maxLength ? `${text.slice(0, maxLength)}...` : text
  }
  const hex = Array.from(bytes.subarray(0, HEX_PREFIX_BYTES), (byte) => byte.toString(16).padStart(2, '0')).join(' ')
  return `${bytes.length} bytes, not text: ${hex}${bytes.length > HEX_PREFIX_BYTES ? ' ...' : ''}`
}
