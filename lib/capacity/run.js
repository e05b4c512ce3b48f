// A capacity run: per test and objective a search per format (search.js) whose probes take turns,
// format by format, on one server on its fixed CPU budget, so that whatever the machine does meets
// both formats; one generator process per format on the other CPUs. Server and generators are
// renewed together between confirming rounds (a generation of processes per round).
// Each probe is a short open-loop step at one rate after an unrecorded lead-in at the same rate,
// judged against the objective (judge.js) with the server's CPU read from the kernel around it,
// and what other processes and guests took from the machine meanwhile.
import { performance } from 'node:perf_hooks'
import { pinProcess, startServerProcess, undoOnSignal } from '../processes.js'
import { CpuClock } from '../cpu-time.js'
import { BatchClient, HEAP_FLAGS } from '../compare/client-handle.js'
import { START_WARMUP_CPU_MS } from '../compare/lockstep.js'
import { MachineWatch, settle } from '../compare/machine-watch.js'
import { wasDisturbed } from '../compare/results.js'
import { trialOrder } from '../compare/statistics.js'
import { CapacitySearch, SCOUT_SHARE } from './search.js'
import { judgeProbe, pacingTickMs } from './judge.js'
import { limitCpu } from './server-budget.js'

/**
 * @typedef {object} CapacityPlan what measureCapacity runs
 * @property {string[]} formats
 * @property {string[]} labels one per format (a format named twice is `json#2`)
 * @property {Array<{key: string, test: string|null, custom: object|null, profile: string, label: string}>} rows
 * @property {import('./slo.js').Slo[]} slos
 * @property {string[]} codecModules
 * @property {object} load what every generator sends: direction, connections, inflight, compress, repeat, pacing, ca
 * @property {string[]} serverArgs
 * @property {string[]|null} serverCommand
 * @property {import('./server-budget.js').ServerBudget} budget
 * @property {{startRate: number, rounds: number, stepMs: number, leadMs: number, startWarmupMs: number}} schedule
 * @property {(line: string) => void} progress
 */

/**
 * Runs every search of the plan.
 * @param {CapacityPlan} plan
 * @returns {Promise<{searches: object[]}>} one search per row, objective and format
 */
export async function measureCapacity (plan) {
  const searches = []
  for (const row of plan.rows) {
    for (const slo of plan.slos) searches.push(...await searchRow(plan, row, slo))
  }
  return { searches }
}

/**
 * One row at one objective: a search per format, their probes taking turns (the order balanced
 * from step to step), until every search has its answer. The first bisection and the first round
 * run on one generation of processes, and every later round on a fresh one, which the formats'
 * searches enter together: a server's or a generator's own speed (what its compiler made of the
 * code, where its heap landed; a few percent between fresh servers here at one rate) is then each
 * round's to vary, and so in the interval, not one run's for all its rounds.
 */
async function searchRow (plan, row, slo) {
  const { formats, labels, schedule, progress } = plan
  const searches = formats.map(() => new CapacitySearch({ startRate: schedule.startRate, rounds: schedule.rounds }))
  const probes = formats.map(() => [])
  const percentiles = [...new Set([50, 99, slo.percentile])]
  let generation = 1
  let processes = await openGeneration(plan, row, slo)
  try {
    for (let step = 0; searches.some((search) => !search.done); step++) {
      if (searches.every((search) => search.done || search.roundsRun > generation)) {
        const closing = processes
        processes = null
        await closeGeneration(closing)
        processes = await openGeneration(plan, row, slo)
        generation++
      }
      for (const f of trialOrder(formats.length, step)) {
        // A search that has begun its next round waits there for the others and fresh processes.
        const rate = searches[f].roundsRun > generation ? null : searches[f].next()
        if (rate === null) continue
        const scout = searches[f].scouting
        const probe = await runProbe(plan, row.key, rate, percentiles, processes, f, scout)
        const verdict = judgeProbe(probe, rate, slo, plan.budget.cores)
        const pids = { server: processes.server.pid, generator: processes.generators[f].pid }
        probes[f].push({ rate, generation, pids, scout, ...probe, ...verdict })
        searches[f].record({ rate, ...verdict, disturbed: wasDisturbed(probe.machine) })
        progress(probeLine(row, slo, labels[f], rate, probe, verdict))
      }
    }
  } finally {
    if (processes) await closeGeneration(processes)
  }
  return formats.map((format, f) => ({
    row: row.label,
    profile: row.profile,
    slo: slo.text,
    percentile: slo.percentile,
    boundUs: slo.boundUs,
    tickMs: pacingTickMs(slo),
    format: labels[f],
    generations: generation,
    ...searches[f].result(),
    probes: probes[f]
  }))
}

/**
 * A generation's processes: the server on its budget and a generator per format, each connected
 * and warmed up on the row, then moved to the generators' CPUs. Their pacing groups messages a
 * tick apart that the objective can spare (judge.js pacingTickMs).
 * @returns {Promise<{server: object, generators: BatchClient[]}>}
 */
async function openGeneration (plan, row, slo) {
  const server = await startServer(plan)
  const { formats, labels } = plan
  const generators = formats.map((format, i) => new BatchClient(`generator ${labels[i]}`))
  const ticked = { ...plan, load: { ...plan.load, tickMs: pacingTickMs(slo) } }
  try {
    await Promise.all(generators.map((generator, i) => openGenerator(generator, formats[i], server.url, ticked, row)))
  } catch (err) {
    await closeGeneration({ server, generators })
    throw err
  }
  return { server, generators }
}

async function closeGeneration ({ server, generators }) {
  await Promise.all(generators.map((generator) => generator.close()))
  await server.stop()
}

/**
 * The server on its budget: taskset's CPUs, and a quota for a fraction of a core. It serves every
 * format; its clock reads its CPU from the kernel.
 */
async function startServer ({ serverArgs, serverCommand, budget }) {
  const [command, ...commandArgs] = serverCommand ?? []
  const server = await startServerProcess(serverArgs, {
    cpus: budget.serverCpus, command, args: [...commandArgs, '--port', '0'], nodeFlags: HEAP_FLAGS
  })
  let limit = null
  try {
    limit = budget.quota && limitCpu(server.child.pid, budget.quota)
  } catch (err) {
    await server.stop()
    throw err
  }
  // Interrupted, the server still goes and its cgroup with it.
  const stop = undoOnSignal(() => server.stop().then(() => limit?.remove()))
  return { url: server.url, pid: server.child.pid, clock: new CpuClock(server.child.pid), stop }
}

/** Makes a generator ready: its format's row prepared, connected, warmed up, then moved to the generators' CPUs. */
async function openGenerator (generator, format, url, { codecModules, load, budget, schedule }, row) {
  await generator.ask({ type: 'open', plan: { formats: [format], codecModules, load, rows: [row] } })
  await generator.connect(format, url)
  const ms = schedule.startWarmupMs
  await generator.ask({ type: 'warm', key: row.key, ms, cpuMs: Math.min(ms, START_WARMUP_CPU_MS), maxMs: ms * 3 })
  pinProcess(generator.pid, budget.generatorCpus)
}

/**
 * One probe: a lead-in at the rate, unrecorded (the server's queues and the generator's pacing at
 * their steady state), then the measured step (a scout's shorter), the server's CPU read around
 * it. It starts once the last probe's processes have gone quiet. A fan-out's costs are per delivery.
 */
async function runProbe ({ schedule, load }, key, rate, percentiles, { server, generators }, f, scout) {
  const generator = generators[f]
  const clocks = [server.clock, ...generators.map((each) => each.clock)]
  await settle(clocks)
  const lead = Math.max(1, Math.round(rate * schedule.leadMs / 1000))
  // A fan-out's subscribers connect per probe: its lead-in is the probe's own, on its connections.
  const fanout = load.direction === 'fanout'
  // Led in as a probe, its answer dropped: run as a batch, the recording code was cold at the first
  // probe of each fresh generation (send lag p99 2.0-3.6 ms against 1.2-1.8 ms after it, test 3,
  // one core), which called its generator saturated, and so the capacity a bound.
  if (!fanout) await generator.probe(key, lead, rate, percentiles)
  const count = Math.max(1, Math.round(rate * schedule.stepMs * (scout ? SCOUT_SHARE : 1) / 1000))
  const cpuBefore = server.clock.read()
  const watch = new MachineWatch(clocks)
  const started = performance.now()
  const probe = await generator.probe(key, count, rate, percentiles, fanout ? lead : 0)
  const wallMs = performance.now() - started
  const serverNs = server.clock.read() - cpuBefore
  const machine = watch.read()
  if (probe.failure) throw new Error(`${generator.name} failed at ${rate}/s: ${probe.failure}`)
  const sent = probe.messages.sent
  // The server's CPU spans a fan-out's lead-in too (and its subscribers' connecting), the generator's the step alone.
  const serverUnits = fanout ? (lead + sent) * load.connections : sent
  const generatorUnits = fanout ? probe.fanout.delivered : sent
  const perMessageUs = serverUnits > 0 ? round(serverNs / 1000 / serverUnits) : null
  return {
    ...probe,
    server: { cores: round(serverNs / 1e6 / wallMs), perMessageUs },
    machine,
    generatorPerMessageUs: generatorUnits > 0 ? round(Math.max(0, probe.cpuUs - probe.pacingUs) / generatorUnits) : null
  }
}

function probeLine (row, slo, label, rate, probe, verdict) {
  const us = probe.latencyUs[slo.percentile]
  const latency = us === null ? 'no replies' : `${slo.text.split('<')[0]} ${(us / 1000).toFixed(2)} ms`
  const call = verdict.pass ? 'pass' : `FAIL (${verdict.reasons.join(', ')}${verdict.generatorBound ? '; generator-bound' : ''})`
  const deliveries = probe.fanout ? `, ${probe.fanout.delivered}/${probe.fanout.expected} delivered` : ''
  return `${row.label} ${slo.text} ${label.padEnd(8)} ${String(rate).padStart(7)}/s  ${call}  ${latency}${deliveries}, ` +
    `server ${probe.server.cores} cores, generator loop ${Math.round((probe.generator?.loopBusy ?? 0) * 100)}%`
}

const round = (value) => Math.round(value * 100) / 100
