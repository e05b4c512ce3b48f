// Number formatting shared by every report, so a figure reads the same in each of them.

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
