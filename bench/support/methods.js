// The method each recorded command measures with (lib/provenance.js): compare's and capacity's from
// lib/, and each benchmark's own. A benchmark not listed is at version 1. When a change alters what
// a benchmark measures (its schedule, or code it measures whose figures move), list it here with the
// next version and the time of the change: its older result files are then stale, and
// `npm run docs:results -- --check` names the command that remakes them.
import { CAPACITY_METHOD } from '../../lib/capacity/results.js'
import { COMPARE_METHOD } from '../../lib/compare/results.js'

/** When precise pacing came to spend at most a budget of a core: the clients' CPU and send lag moved. */
const BUDGETED_PACING = '2026-11-28T07:03:41.000Z'

/** When the benches came to share one median: the mean of the two middle values of an even count. */
const SHARED_MEDIAN = '2026-11-28T13:00:14.000Z'

/** When the shaping proxy came to deliver segment by segment: a read of several messages no longer arrives as one. */
const SEGMENTED_PROXY = '2026-11-28T15:00:00.000Z'

/** When --out came to push from a thread of its own, and bench:out to count streaming's CPU exactly. */
const PUSHING_THREAD = '2026-11-28T15:15:00.000Z'

/** @type {Record<string, {version: number, since: string, uses?: import('../../lib/provenance.js').Method[]}>} */
const BENCHES = {
  // Open-loop clients at a rate: paced within a budget, their pacing's CPU reported apart.
  hosts: { version: 2, since: BUDGETED_PACING },
  ramp: { version: 2, since: BUDGETED_PACING },
  arrivals: { version: 2, since: BUDGETED_PACING },
  reconnect: { version: 2, since: BUDGETED_PACING },
  // Benchmarks that run a comparison or a capacity search measure with its method too.
  backends: { version: 1, since: '', uses: [COMPARE_METHOD] },
  // Medians of an even count of runs or cells (20 runs' peak RSS; the A/A cells' resolutions).
  startup: { version: 2, since: SHARED_MEDIAN },
  verdicts: { version: 2, since: SHARED_MEDIAN, uses: [COMPARE_METHOD] },
  capacity: { version: 1, since: '', uses: [CAPACITY_METHOD] },
  // Many messages in flight through the shaping proxy (the bulk accuracy check).
  throttle: { version: 2, since: SEGMENTED_PROXY },
  out: { version: 2, since: PUSHING_THREAD }
}

/**
 * The methods a recorded command measures with, read from the command itself:
 * `npm run compare ...`, `npm run capacity ...` or `npm run bench:NAME ...` (after any BENCH_* settings).
 * @param {string} command as a result file records it
 * @returns {import('../../lib/provenance.js').Method[]} none for a command that names no method
 */
export function methodsOf (command) {
  const script = /\bnpm run ([\w:-]+)/.exec(command)?.[1]
  if (script === 'compare') return [COMPARE_METHOD]
  if (script === 'capacity') return [CAPACITY_METHOD]
  if (!script?.startsWith('bench:')) return []
  const { version, since, uses = [] } = BENCHES[script.slice('bench:'.length)] ?? { version: 1, since: '' }
  return [{ name: script, version, since }, ...uses]
}
