// The statistics the benchmarks share.

/**
 * The median: the middle value, or the mean of the two middle ones of an even count (as hyperfine's
 * medians and compare's are).
 * @param {number[]} values
 * @returns {number|null} null when there are none
 */
export function median (values) {
  if (values.length === 0) return null
  const sorted = values.toSorted((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
}
