// Seeded randomness for the test payloads and streams: the same seed gives the same values on
// every machine, in the client, the server and the browser's copy alike.

/**
 * mulberry32: a tiny, well-known seeded PRNG; enough for reproducible sample values.
 * @param {number} seed
 * @returns {() => number} numbers in [0, 1)
 */
export function createRandom (seed) {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * The draws the payload builders use, over one seeded generator.
 * @param {number} seed
 */
export function createSampler (seed) {
  const random = createRandom(seed)
  const int = (min, max) => min + Math.floor(random() * (max - min + 1))
  return {
    random,
    int,
    /** A number in [min, max). */
    real: (min, max) => min + random() * (max - min),
    /** True with this probability. */
    chance: (probability) => random() < probability,
    pick: (items) => items[int(0, items.length - 1)],
    /** An integer from min to max, small values far likelier (counts, quantities, sizes). */
    skewed: (min, max) => min + Math.floor((max - min + 1) * random() ** 3)
  }
}

/**
 * A value rounded to a number of decimals that is never integral, so its JSON kind (a number
 * with a fraction) stays the same in every message: 12.00 becomes 12.01.
 * @param {number} value
 * @param {number} decimals
 * @returns {number}
 */
export function decimal (value, decimals) {
  const scale = 10 ** decimals
  let scaled = Math.round(value * scale)
  if (scaled % scale === 0) scaled += 1
  return scaled / scale
}
