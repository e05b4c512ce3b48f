// Which trial runs next, and when a comparison stops: every row (a test on a network) first runs
// one unrecorded warm-up trial of each format, then trial pairs in balanced order, looking at the
// data every LOOK_STEP pairs and stopping a row once every one of its cells is decided, at the
// planned maximum, or when the time budget would be overrun. The same code runs real client
// processes in `npm run compare` and simulated trials in the tests of the statistics.
import { UsageError } from '../errors.js'
import { METRICS, trialOrder, verdictsOf } from './statistics.js'

/** Pairs between looks: two balanced blocks (A B, B A, B A, A B). */
export const LOOK_STEP = 4

/** The most pairs an adaptive comparison runs per row: the spending function is planned over them. */
export const PLANNED_PAIRS = 20

/**
 * @typedef {object} Row one test on one network profile: a row of the table
 * @property {string} key unique, e.g. `small\nnone`
 * @property {string} label for progress lines and errors
 */

/**
 * @callback RunTrial runs one trial of one format on one row
 * @param {Row} row
 * @param {number} format index into the formats
 * @param {number|null} pair 1-based pair number, or null for the row's warm-up trial (discarded)
 * @returns {Promise<Record<string, number|null>>} the trial's value for every metric (METRICS)
 */

/**
 * Runs a comparison's trials: warm-up, then pairs, looking after every LOOK_STEP pairs.
 * @param {object} options
 * @param {Row[]} options.rows in the order they run within a look
 * @param {number} options.formats how many formats (the first is the baseline)
 * @param {number} [options.trials] a fixed number of pairs per row, one look at the end; without it the run is adaptive
 * @param {number} [options.budgetMs] adaptive runs: no pair starts that would end after this, counted from the start
 * @param {boolean} [options.budgetGiven] whether the user set the budget: if it cannot fit two pairs of every row,
 *   refuse the run; a default budget is stretched to fit them instead
 * @param {number} options.margin the equivalence margin
 * @param {RunTrial} options.runTrial
 * @param {() => number} options.now milliseconds, any origin
 * @returns {Promise<{trials: Map<string, Array<Array<Record<string, number|null>>>>, design: import('./statistics.js').Design,
 *   stops: Record<string, 'decided'|'budget'|'planned'>, budgetMs: number|null}>} per row key, per format, the
 *   pairs' values; the budget kept (a default one stretched to two pairs)
 * @throws {UsageError} when a budget the user set cannot fit two pairs of every row after the warm-up
 */
export async function runSequential ({ rows, formats, trials, budgetMs, budgetGiven = true, margin, runTrial, now }) {
  const started = now()
  const plannedPairs = trials ?? PLANNED_PAIRS
  const family = rows.length * (formats - 1) * Object.keys(METRICS).length
  const design = { family, plannedPairs, lookStep: LOOK_STEP, margin, looks: {} }
  const entryOf = (row) => ({ row, values: Array.from({ length: formats }, () => []), trialMs: 0, trialsRun: 0 })
  const state = new Map(rows.map((row) => [row.key, entryOf(row)]))
  const timed = async (entry, format, pair) => {
    const before = now()
    const values = await runTrial(entry.row, format, pair)
    entry.trialMs += now() - before
    entry.trialsRun++
    return values
  }
  for (const entry of state.values()) {
    for (let format = 0; format < formats; format++) await timed(entry, format, null)
  }
  const pairMs = (entry) => formats * entry.trialMs / entry.trialsRun
  if (trials === undefined) {
    const needed = [...state.values()].reduce((sum, entry) => sum + 2 * pairMs(entry), now() - started)
    if (needed > budgetMs && budgetGiven) {
      throw new UsageError(`--budget ${seconds(budgetMs)} is too short for two trial pairs of every test and network: ` +
        `the warm-up suggests ${seconds(needed)}; give a longer --budget, fewer tests, or --trials`)
    }
    budgetMs = Math.max(budgetMs, Math.ceil(needed))
  }
  const lookAt = trials === undefined
    ? Array.from({ length: PLANNED_PAIRS / LOOK_STEP }, (_, i) => (i + 1) * LOOK_STEP)
    : [trials]
  const stops = {}
  const open = new Set(state.values())
  for (const target of lookAt) {
    // Rows take turns a block (two pairs) at a time, so a budget that ends within a look leaves
    // every row about the same number of pairs, not the first rows all and the last none.
    const cut = new Set()
    const unfinished = (entry) => !cut.has(entry) && entry.values[0].length < target
    for (let running = [...open]; running.length > 0; running = running.filter(unfinished)) {
      for (const entry of running) {
        for (let block = 0; block < 2 && entry.values[0].length < target; block++) {
          if (trials === undefined && now() - started + pairMs(entry) > budgetMs) {
            cut.add(entry)
            break
          }
          const pair = entry.values[0].length
          for (const format of trialOrder(formats, pair)) {
            entry.values[format][pair] = await timed(entry, format, pair + 1)
          }
        }
      }
    }
    for (const entry of open) {
      const key = entry.row.key
      const pairs = entry.values[0].length
      const looks = (design.looks[key] ??= [])
      if (pairs > 0 && pairs !== looks.at(-1)) looks.push(pairs)
      if (cut.has(entry)) stops[key] = 'budget'
      else if (decided(entry.values, looks, design, target === lookAt.at(-1))) stops[key] = 'decided'
      else if (target === lookAt.at(-1)) stops[key] = 'planned'
      if (stops[key]) open.delete(entry)
    }
  }
  const values = new Map([...state].map(([key, entry]) => [key, entry.values]))
  return { trials: values, design, stops, budgetMs: trials === undefined ? budgetMs : null }
}

/** Whether every cell of a row has been called better, worse or equivalent at one of its looks. */
function decided (values, looks, design, final) {
  return values.slice(1).every((candidate) => {
    const verdicts = verdictsOf(values[0], candidate, looks, design, final)
    return Object.keys(METRICS).every((name) => !verdicts[name] || verdicts[name].call !== 'inconclusive')
  })
}

const seconds = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)}s`
