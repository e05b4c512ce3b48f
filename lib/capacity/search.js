// The search for one format's capacity at one objective: the highest offered rate whose probe
// passes. It steps up exponentially from a start rate until a probe fails, bisects between the
// last pass and the first fail, then confirms in rounds: each round probes again around what the
// rounds so far found and brackets the knee anew (a pass below, a fail above, ROUND_STEP apart).
// Each round's estimate comes from its own probes, so the rounds' spread is the capacity's
// interval. Pure: the caller runs the probes and records what they gave.

/** Each step up multiplies the rate by this. */
export const GROWTH = 2
/** The first bisection stops once the fail is within this share above the pass. */
export const PRECISION = 0.03
/**
 * A confirming round steps out from its centre by this share until it holds a pass and a fail, and
 * estimates from that bracket. A bisection within it, as the rounds once had, left the rounds'
 * spread about as it was (their relative standard deviation 3.7% against 4.1% without, over 16
 * searches of tests 3 and 4 on one core) at a third more probes a round: they buy a seventh round
 * instead, for about as narrow an interval, sooner.
 */
export const ROUND_STEP = 0.06
/**
 * A scouting probe (stepping up or down by GROWTH: CapacitySearch#scouting) measures this share of
 * the step. It only brackets the knee: a rate just past it that passes a short step is probed again
 * at full length by the bisection and the rounds, which decide.
 */
export const SCOUT_SHARE = 1 / 3
/** A round that still has no bracket after this many probes ends without an estimate. */
const ROUND_PROBES = 8
/**
 * A probe the generator could not keep up with is run again this many times before the search
 * stops there: one stall of the generator's (a collection, a late wake-up) is no limit of its own
 * (with one retry, a run of tests 1, 2 and 5 once stopped five of six searches at 32,000-64,000/s,
 * and found all six the next time).
 */
export const GENERATOR_RETRIES = 2
/**
 * A generator-bound probe during which other processes (or other guests) took the machine's CPU
 * counts as no strike, up to this many times a search: the generator could not keep up, but for
 * want of the CPU they took, not of its own. (A recording's first search, beside a few seconds of
 * other work, stopped both formats "generator-bound" at 32,000/s and 64,000/s, half their
 * capacities.) Past it, they count: on a machine that stays that busy the search still ends.
 */
export const DISTURBED_RETRIES = 5

/**
 * @typedef {object} Outcome what one probe at `rate` gave
 * @property {number} rate offered, msgs/s
 * @property {boolean} pass the objective held, every message acked, acked rate within 1% of offered
 * @property {number|null} excess the objective's percentile over its bound (below 1 passes), null when
 *   the probe failed on something else (loss, errors, a rate not kept)
 * @property {boolean} [generatorBound] the probe failed, but the generator could not keep up with it
 * @property {boolean} [generatorSaturated] the generator was at its limit, pass or fail
 * @property {boolean} [disturbed] other processes or guests took the machine's CPU during the probe
 */

/**
 * @typedef {object} Bracket the pass and the fail a confirming round estimated between
 * @property {number} low the pass's rate, msgs/s
 * @property {number} high the fail's rate, msgs/s
 * @property {boolean} generatorSaturated the generator was at its limit at the pass: a step above it,
 *   the fail may have been the generator's as much as the server's
 */

/**
 * @typedef {object} SearchResult
 * @property {'found'|'generator-bound'|'below'|'above'|'unsettled'} status found: estimates hold the
 *   capacity; generator-bound: the generator failed first, at `limitRate`, three times in a row; below: even
 *   `limitRate` (the least rate tried) failed; above: even `limitRate` (the most) passed; unsettled:
 *   no confirming round bracketed the knee
 * @property {number[]} estimates one per confirming round, msgs/s (a search that stops otherwise than
 *   found keeps its earlier rounds' on record: they are no capacity)
 * @property {Bracket[]} brackets what each estimate was made between, one per estimate
 * @property {number|null} initial the first bisection's estimate
 * @property {number|null} limitRate
 * @property {Outcome[]} outcomes every probe, in order
 */

export class CapacitySearch {
  /**
   * @param {{startRate: number, rounds: number, minRate?: number, maxRate?: number}} options rounds: confirming
   *   rounds after the first bisection
   */
  constructor ({ startRate, rounds, minRate = 1, maxRate = 10_000_000 }) {
    this.rounds = rounds
    this.minRate = minRate
    this.maxRate = maxRate
    /** @type {Outcome[]} */
    this.outcomes = []
    this.estimates = []
    /** @type {Bracket[]} */
    this.brackets = []
    this.initial = null
    /** Where rounds centre until one estimates: the last bisection's crossing. */
    this.centre = null
    this.status = null
    this.limitRate = null
    // The bracket being narrowed: the highest pass and the lowest fail of the current stage.
    this.low = null
    this.high = null
    this.stage = 'step'
    this.rate = startRate
    this.roundProbes = 0
    /** Confirming rounds begun, the one under way among them. */
    this.roundsRun = 0
    /** Generator-bound probes in a row, at the rate now asked for. */
    this.generatorStrikes = 0
    /** Generator-bound probes forgiven as disturbed (DISTURBED_RETRIES), all told. */
    this.disturbedRetries = 0
  }

  /** @returns {boolean} whether the search has its answer */
  get done () {
    return this.status !== null
  }

  /**
   * @returns {boolean} whether the probe next() asks for only scouts for the knee, stepping up or
   *   down by GROWTH: its pass or fail brackets the knee for the bisection and the rounds, whose
   *   probes decide, so it may be shorter
   */
  get scouting () {
    return this.stage === 'step'
  }

  /** @returns {number|null} the rate to probe next, msgs/s, or null once done */
  next () {
    return this.done ? null : Math.round(this.rate)
  }

  /**
   * Takes the outcome of the probe `next()` asked for and decides the one after it.
   * @param {Outcome} outcome
   */
  record (outcome) {
    this.outcomes.push(outcome)
    if (!outcome.pass && outcome.generatorBound) {
      // Not the server's fail: the same rate again, and the search stops there if it repeats.
      if (outcome.disturbed && this.disturbedRetries < DISTURBED_RETRIES) this.disturbedRetries++
      else if (++this.generatorStrikes > GENERATOR_RETRIES) this.finish('generator-bound', outcome.rate)
      return
    }
    this.generatorStrikes = 0
    if (outcome.pass) this.low = outcome
    else this.high = outcome
    if (this.stage === 'step') return this.step(outcome)
    if (this.stage === 'bisect') return this.bisect()
    this.confirm(outcome)
  }

  /** Steps up until a fail (or down until a pass, when the first probe fails), then bisects. */
  step (outcome) {
    if (this.low && this.high) {
      this.stage = 'bisect'
      return this.bisect()
    }
    if (outcome.pass && outcome.rate >= this.maxRate) return this.finish('above', outcome.rate)
    if (!outcome.pass && outcome.rate <= this.minRate) return this.finish('below', outcome.rate)
    const rate = outcome.pass ? outcome.rate * GROWTH : outcome.rate / GROWTH
    this.rate = Math.min(this.maxRate, Math.max(this.minRate, rate))
  }

  /** Narrows the first bracket to PRECISION, then starts the confirming rounds from its estimate. */
  bisect () {
    if (this.high.rate / this.low.rate > 1 + PRECISION) {
      this.rate = Math.sqrt(this.low.rate * this.high.rate)
      return
    }
    // The first bisection's estimate is the search's initial one; any later (after rounds that
    // found no bracket) only recentres the rounds.
    this.centre = crossing(this.low, this.high)
    this.initial ??= this.centre
    this.startRound()
  }

  /** A round probes its centre, steps out until it holds a pass and a fail, and estimates between them. */
  confirm (outcome) {
    this.roundProbes++
    if (this.low && this.high && this.high.rate > this.low.rate) {
      this.estimates.push(crossing(this.low, this.high))
      const { low, high } = this
      this.brackets.push({ low: low.rate, high: high.rate, generatorSaturated: Boolean(low.generatorSaturated) })
      return this.startRound()
    }
    if (this.roundProbes >= ROUND_PROBES) {
      // Stepped its fill to one side only: the knee is far from where the rounds look (a first
      // bisection misled by one fluke). Step out again by GROWTH and bisect anew, as at the start.
      this.stage = 'step'
      return this.step(outcome)
    }
    this.rate = outcome.pass ? outcome.rate * (1 + ROUND_STEP) : outcome.rate / (1 + ROUND_STEP)
  }

  /** The next round, centred on the mean of the estimates so far (the last bisection's before any). */
  startRound () {
    if (this.roundsRun === this.rounds) return this.finish(this.estimates.length > 0 ? 'found' : 'unsettled', null)
    this.roundsRun++
    this.stage = 'confirm'
    this.low = null
    this.high = null
    this.roundProbes = 0
    const known = this.estimates.length > 0 ? this.estimates : [this.centre]
    this.rate = known.reduce((sum, rate) => sum + rate, 0) / known.length
  }

  finish (status, limitRate) {
    this.status = status
    this.limitRate = limitRate
  }

  /** @returns {SearchResult} */
  result () {
    const { status, estimates, brackets, initial, limitRate, outcomes } = this
    return { status, estimates, brackets, initial, limitRate, outcomes }
  }
}

/**
 * Where the objective crosses its bound between a pass and a fail: interpolated on the log of each
 * probe's excess (latency grows about exponentially towards the knee), or their geometric mean
 * when the fail was not a latency (loss, a rate not kept).
 * @param {Outcome} low a pass
 * @param {Outcome} high a fail above it
 * @returns {number} msgs/s
 */
export function crossing (low, high) {
  if (!(low.excess > 0) || !(high.excess >= 1) || high.excess <= low.excess) return Math.sqrt(low.rate * high.rate)
  const share = -Math.log(low.excess) / (Math.log(high.excess) - Math.log(low.excess))
  return low.rate + share * (high.rate - low.rate)
}
