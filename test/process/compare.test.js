// Process-level: `npm run compare` (bin/compare.js) as a user runs it, with its real server and batch
// client processes, in lockstep generations. Each run is kept short: --trials 2 (the fewest), small
// batches (-n 20; fan-out's -n 10, 50 ms of publishes), a 100 ms start warm-up and one or two rows;
// a row's batches still take about ROW_MS per generation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { setTimeout } from 'node:timers/promises'
import { ROOT, runScript, temporaryDirectory } from '../helpers.js'
import { METRICS } from '../../lib/compare/statistics.js'

const tempDir = () => temporaryDirectory('compare')
const CALLS = ['better', 'worse', 'mixed', 'equivalent', 'inconclusive']

/** Runs bin/compare.js to a directory of its own; it must succeed. Its output and the results.json it wrote. */
async function compareRun (args) {
  const out = tempDir()
  const run = await runScript('bin/compare.js', [...args, '--out', out])
  assert.equal(run.code, 0, run.stderr)
  return { run, out, results: JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8')) }
}

describe('npm run compare', () => {
  test('npm run compare: bad options are refused before anything runs', async () => {
    const out = tempDir()
    // Each refused before anything starts: all at once.
    await Promise.all([
      [['--throttle', 'none,custom-free'], /^unknown --throttle 'custom-free'/],
      [['--tests', '5,9'], /^unknown test '9'/],
      [['-n', '0'], /^--messages must be a whole number >= 1/],
      [['--formats', 'json,xml'], /^unknown format 'xml': expected one of .*, or add it with --codec-module <file\.js>\n$/],
      [['--trials', '1'], /^--trials must be a whole number >= 2, got '1'/],
      [['--trials', 'many'], /^--trials must be a whole number >= 2, got 'many'/],
      [['--trials', '51'], /^--trials must be at most 50, got 51/],
      [['--warmup', '10'], /^Unknown argument: warmup \(see --help\)\n$/],
      [['--formats', ','], /^--formats needs at least one of avro, cbor, .*json, .*protobuf/],
      [['--equivalence', '0'], /^--equivalence must be a percentage above 0 and below 100, got '0'/],
      [['--equivalence', 'abc'], /^--equivalence must be a percentage above 0 and below 100, got 'abc'/],
      [['--budget', '-1s'], /^--budget must be a duration such as 30s, 500ms or 2m, got '-1s'/],
      [['--trials', '3', '--budget', '1m'], /^give either --trials \(a fixed number of generations\) or --budget \(as many as fit\), not both/],
      [['--formats', 'json,avro', '--payload', 'test/fixtures/infer/geojson.json'], /^format 'avro' does not carry a payload of your own/],
      [['--calibrate', '--formats', 'json,json'], /^--calibrate compares JSON with itself plus a planted cost: it takes no --formats or --payload\n$/],
      [['--calibrate', 'server:0'], /^--calibrate takes client or server, µs above 0, or both as server:30; got 'server:0'\n$/]
    ].map(async ([args, error]) => {
      const { code, stdout, stderr } = await runScript('bin/compare.js', [...args, '--out', out])
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`)
      assert.match(stderr, error)
      assert.equal(stderr.trim().split('\n').length, 1, 'one line, no stack trace')
      assert.equal(stdout, '')
    }))
    assert.deepEqual(fs.readdirSync(out), [], 'nothing written')
  })

  test('npm run compare: two generations of both formats on each test and profile, exact accounting, the table, results written', async () => {
    const { run, out, results } = await compareRun(['--tests', '5', '--throttle', 'none,fois', '-n', '20', '--trials', '2', '--compress', '--start-warmup', '100ms'])
    assert.deepEqual(results.formats, ['json', 'protobuf'])
    // Per generation: each row's client processes run it, one per format; the next generation they swap formats.
    assert.deepEqual(results.reports.map((r) => `${r.test}/${r.network.profile}/${r.label}/${r.trial}`), [
      'small/none/json/1', 'small/fois/json/1', 'small/none/protobuf/1', 'small/fois/protobuf/1',
      'small/none/json/2', 'small/fois/json/2', 'small/none/protobuf/2', 'small/fois/protobuf/2'
    ])
    assert.deepEqual(Object.keys(results.settings.batches), ['5 small', '5 small on fois'])
    for (const report of results.reports) {
      const plan = results.settings.batches[`5 small${report.network.profile === 'none' ? '' : ' on fois'}`]
      assert.deepEqual([plan.closedCount, plan.openCount, plan.timedRate], [20, 20, null], '-n: the messages of every batch')
      const what = `${report.label} ${report.network.profile} ${report.trial}`
      // Every measured message, the closed-loop batches' and the open-loop batches'.
      assert.deepEqual(report.messages, { sent: 20 * (plan.closedPairs + plan.openPairs), acked: 20 * (plan.closedPairs + plan.openPairs), errors: 0, lost: 0 }, what)
      assert.ok(report.cpu.perMessageUs > 0, `${what}: ${JSON.stringify(report.cpu)}`)
      assert.equal(typeof report.generator.saturated, 'boolean', 'every report says whether its client was saturated')
      assert.equal(report.server.messages, 20 * plan.openPairs, `${what}: the server's CPU is over the open-loop messages`)
      assert.ok(report.server.perMessageUs > 0, what)
      assert.ok(report.codec.clientUs > 0 && report.codec.serverUs > 0, `${what}: ${JSON.stringify(report.codec)}`)
      assert.deepEqual(report.compression, { accepted: true }, 'permessage-deflate, asked for and taken')
    }
    const shaped = results.reports.find((r) => r.network.profile === 'fois').network
    assert.deepEqual([shaped.up, shaped.down, shaped.rtt], [5000, 20000, 2])
    assert.ok(['tc', 'proxy'].includes(shaped.backend), shaped.backend)
    assert.deepEqual(results.rows.map((row) => `${row.test}/${row.profile}`), ['5 small/none', '5 small/fois'])
    const small = results.rows[0]
    // The mean over the stream of small messages (the one message is 22 and 6 bytes).
    assert.equal(small.figures.json.payloadBytes, 24)
    assert.equal(small.figures.protobuf.payloadBytes, 7)
    assert.equal(small.ratios.protobuf.payloadBytes, 0.292)
    assert.equal(results.settings.compress, true)
    assert.equal(results.settings.trials, 2)
    assert.equal(results.settings.budgetMs, null)
    assert.equal(results.settings.servers, 2)
    assert.equal(results.settings.calibrate, null)
    assert.deepEqual(results.settings.generations.map((generation) => generation.index), [1, 2])
    for (const generation of results.settings.generations) {
      assert.ok(generation.ms > 0 && Array.isArray(generation.saturated))
      assert.ok(generation.neighbourCores === null || generation.neighbourCores >= 0)
      assert.equal(generation.reports, undefined, 'the reports are in results.reports, not repeated here')
    }
    assert.match(results.settings.pinning, /^servers on CPU \d+, clients on CPU \d+$|^not possible here/)
    assert.ok(results.settings.elapsedMs > 0)
    assert.equal(results.family.method, 'max-t')
    assert.equal(results.family.generations, 2)
    assert.equal(small.trials.json.length, 2)
    assert.equal(small.generations, 2)
    assert.deepEqual(Object.keys(small.verdicts.protobuf), Object.keys(METRICS))
    // Compressed, both formats' small messages come to about a dozen bytes on the wire: which whole
    // number each rounds to depends on the batches planned, but every generation sends the same ones.
    for (const row of results.rows) {
      const bytes = row.verdicts.protobuf.bytes
      assert.deepEqual(bytes.ci, [bytes.ratio, bytes.ratio], `${row.profile}: the same bytes in every generation, an exact ratio`)
      assert.ok(bytes.ratio <= 1 && ['better', 'equivalent'].includes(bytes.call), `${row.profile}: ${JSON.stringify(bytes)}`)
      assert.equal(bytes.ratio, row.figures.protobuf.wireBytes / row.figures.json.wireBytes)
    }
    assert.ok(CALLS.includes(small.calls.protobuf))

    // The human table on stdout: one line per format, one for the ratio; the answer in words; how it was made.
    const lines = run.stdout.trimEnd().split('\n')
    assert.match(lines[0], /^test\s+network\s+format\s+B\/msg\s+wire B\/msg\s+msgs\/s\s+p50 ms\s+p99 ms\s+client CPU µs\/msg\s+server CPU µs\/msg\s+client codec µs\/msg\s+server codec µs\/msg\s+sent\/acked\/errors\/lost$/)
    assert.match(lines[1], new RegExp(`^5 small\\s+none\\s+json\\s+24\\s+\\d+\\s+[\\d,.]+(\\s+[\\d.]+){6}\\s+${small.figures.json.accounting}$`))
    assert.match(lines[2], /^\s+protobuf\s+7\s/)
    assert.match(lines[3], /^\s+protobuf\/json\s+0\.29x\s/)
    assert.match(lines[4], /^5 small\s+fois\s+json\s+24\s/)
    assert.equal(lines[7], '')
    const call = '(?:better|worse|equivalent|inconclusive, ±[\\d.>]+%)'
    // Interval bounds as results.js prints them: <0.001 and >999 at the extremes (two noisy generations give those).
    assert.match(lines[8], new RegExp(`^5 small, loopback: protobuf vs json: p50 [\\d.]+x \\([\\d.<]+-[\\d.>]+\\) ${call}, p99 .*, ` +
      `wire bytes (?<wire>[\\d.]+)x \\(\\k<wire>-\\k<wire>\\) (?:better|equivalent), client CPU/msg .* ${call}, server CPU/msg .* ${call}, ` +
      `client codec/msg .* ${call}, server codec/msg .* ${call}: (?:better|worse|equivalent|inconclusive|mixed \\(.*\\))$`))
    assert.match(lines[9], /^5 small, fois: protobuf vs json: /)
    const rest = lines.slice(10)
    assert.equal(rest.shift(), '')
    if (rest.length === 3) {
      assert.match(rest.shift(), /^inconclusive after 2 generations: 5 small: /)
      assert.equal(rest.shift(), '')
    }
    assert.match(rest[0], /^Each ratio is the geometric mean of the per-generation ratios .* a critical t of [\d.]+ over its \d+ varying cells/)
    assert.equal(rest.length, 1)

    const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8')
    assert.match(markdown, /^## Verdict\n\n- 5 small, loopback: protobuf vs json: p50 [\d.]+x \([\d.]+-[\d.>]+\)/m)
    assert.match(markdown, /^- 5 small, fois: protobuf vs json: .*wire bytes [01]\.\d\dx/m)
    assert.match(markdown, /^\| test \| network \| format \| B\/msg \| wire B\/msg \| msgs\/s \| p50 ms \| p99 ms \| client CPU µs\/msg \| server CPU µs\/msg \| client codec µs\/msg \| server codec µs\/msg \| sent\/acked\/errors\/lost \|$/m)
    assert.match(markdown, /^\| 5 small \| none \| json \| 24 \|/m)
    assert.match(markdown, /^\| {2}\| {2}\| protobuf\/json \| 0\.29x \|/m)
    assert.match(markdown, /2 generations after unrecorded warm-ups/)
    assert.match(markdown, /2 server processes and 2 client processes per row for the whole run, on loopback, swapping formats between generations/)
    assert.match(markdown, /permessage-deflate on/)
    assert.match(fs.readFileSync(path.join(out, 'report.html'), 'utf8'), /^<!doctype html>/)
    const progress = run.stderr.split('\n').filter((line) => /^(warm-up|generation) /.test(line))
    assert.deepEqual(progress, [
      'warm-up 1 of 2: every test in every format, not recorded',
      'warm-up 2 of 2: every test in every format, not recorded',
      'generation 1 of 2: 2 formats, 2 tests in lockstep',
      'generation 2 of 2: 2 formats, 2 tests in lockstep'
    ])
    assert.match(run.stderr, new RegExp(`^wrote ${out}/results.json, ${out}/results.md, ${out}/report.html; 2 generations in [\\d.]+ s$`, 'm'))
  })

  test('npm run compare --formats protobuf,json,protobuf --direction down --budget 1s: formats in the order given (one twice, an A/A column), ratios against the first, wire bytes read, two generations however short the budget', async () => {
    // --repeat: one message, so every reply has the same size and the figures are exact.
    const formats = ['protobuf', 'json', 'protobuf']
    const labels = ['protobuf', 'json', 'protobuf#2']
    const run = await runScript('bin/compare.js', ['--tests', 'person', '--formats', formats.join(','), '-n', '20', '--budget', '1s', '--direction', 'down', '--repeat', '--start-warmup', '100ms', '--json', '--out', tempDir()])
    assert.equal(run.code, 0, run.stderr)
    const results = JSON.parse(run.stdout)
    assert.deepEqual(results.formats, labels)
    assert.deepEqual(results.reports.map((r) => `${r.format}:${r.label}:${r.trial}`),
      [1, 2].flatMap((trial) => labels.map((label, i) => `${formats[i]}:${label}:${trial}`)))
    assert.equal(results.settings.direction, 'down')
    assert.equal(results.settings.repeat, true)
    assert.equal(results.settings.servers, 3, 'one server per column')
    // A budget shorter than two generations still gets two: the fewest that give an interval.
    assert.equal(results.settings.trials, null)
    assert.equal(results.settings.budgetMs, 1000)
    assert.equal(results.settings.budgetAsked, 1000)
    assert.equal(results.settings.generations.length, 2)
    assert.match(run.stderr, /^generation 1: 3 formats, 1 tests in lockstep$/m, 'no fixed count to name')
    assert.match(run.stderr, /; 2 generations in [\d.]+ s$/m)
    for (const report of results.reports) {
      assert.equal(report.direction, 'down')
      assert.deepEqual(report.payload, { kind: 'repeated', messages: 1, seed: null }, 'the clients were told --repeat')
      const { sent, acked, errors, lost } = report.messages
      assert.equal(sent, acked + errors + lost)
      assert.deepEqual([errors, lost], [0, 0], report.label)
      assert.ok(report.codec.serverUs > 0, `${report.label}: the server encodes every reply`)
    }
    // In each generation the columns are on different servers.
    for (const trial of [1, 2]) {
      assert.equal(new Set(results.reports.filter((r) => r.trial === trial).map((r) => r.server.process)).size, 3)
    }
    const [row] = results.rows
    assert.equal(row.generations, 2)
    assert.deepEqual(labels.map((label) => row.figures[label].payloadBytes), [48, 106, 48])
    assert.deepEqual(labels.map((label) => row.figures[label].wireBytes), [50, 108, 50], 'payload + 2-byte unmasked server frame header')
    assert.deepEqual(Object.keys(row.ratios), ['json', 'protobuf#2'])
    assert.equal(row.ratios.json.payloadBytes, 2.208, '106 / 48')
    assert.equal(row.verdicts.json.bytes.call, 'worse')
    assert.equal(row.verdicts['protobuf#2'].bytes.ratio, 1)
    assert.equal(row.verdicts['protobuf#2'].bytes.call, 'equivalent')
  })

  test('npm run compare --direction fanout: one publisher and its subscribers per format take turns, every delivery accounted for', async () => {
    const run = await runScript('bin/compare.js', ['--direction', 'fanout', '--tests', 'small', '-c', '3', '--rate', '200', '-n', '10', '--trials', '2', '--start-warmup', '100ms', '--json', '--out', tempDir()])
    assert.equal(run.code, 0, run.stderr)
    const results = JSON.parse(run.stdout)
    assert.equal(results.settings.direction, 'fanout')
    assert.deepEqual(results.reports.map((r) => `${r.label}:${r.trial}`), ['json:1', 'protobuf:1', 'json:2', 'protobuf:2'])
    for (const report of results.reports) {
      const { sent, acked, errors, lost } = report.messages
      assert.ok(sent > 0 && sent === acked + errors + lost, `${report.label}: ${JSON.stringify(report.messages)}`)
      assert.equal(report.fanout.delivered, sent * 3, `${report.label}: every publish reached the 3 subscribers`)
      assert.ok(report.server.perMessageUs > 0 && report.codec.clientUs > 0, report.label)
    }
    assert.ok(CALLS.includes(results.rows[0].calls.protobuf))
  })

  test('npm run compare stopped with SIGTERM mid-run: it exits 143 and takes its servers and clients with it', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
    const child = spawn(process.execPath, ['bin/compare.js', '--tests', 'small', '--trials', '50', '-n', '20', '--start-warmup', '100ms', '--out', tempDir()], {
      cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe']
    })
    const exited = once(child, 'exit')
    let stderr = ''
    child.stderr.setEncoding('utf8')
    for await (const chunk of child.stderr) {
      stderr += chunk
      if (/^generation 1 /m.test(stderr)) break
    }
    const descendants = processesUnder(child.pid)
    assert.equal(descendants.filter((command) => / server\.js --port 0$/.test(command[1])).length, 2, JSON.stringify(descendants))
    assert.equal(descendants.filter((command) => /batch-client\.js$/.test(command[1])).length, 2, JSON.stringify(descendants))
    child.kill('SIGTERM')
    const [code] = await exited
    assert.equal(code, 143, stderr)
    // The servers stop themselves on the SIGTERM it sent them, the clients once its channel closed: wait for it, boundedly.
    for (let waited = 0; descendants.some(([pid]) => fs.existsSync(`/proc/${pid}`)) && waited < 10_000; waited += 20) await setTimeout(20)
    assert.deepEqual(descendants.filter(([pid]) => fs.existsSync(`/proc/${pid}`)), [], 'nothing left running')
  })

  // The side planted spins 200 µs per message in its codec; the other side, loading the same module, never does.
  for (const { value, side, metrics, where, spins, idle } of [
    { value: '200', side: 'client', metrics: ['p50', 'clientCpu', 'serverCpu'], where: "the client's encode", spins: 'clientCodec', idle: 'serverCodec' },
    { value: 'server:200', side: 'server', metrics: ['p50', 'serverCpu', 'clientCpu'], where: "the server's decode", spins: 'serverCodec', idle: 'clientCodec' }
  ]) {
    test(`npm run compare --calibrate ${value}: json against json with 200 µs planted in ${where}, what was found written beside the table`, async () => {
      const { run, out, results } = await compareRun(['--calibrate', value, '--tests', 'small', '--trials', '2', '-n', '20', '--repeat', '--start-warmup', '100ms'])
      assert.deepEqual(results.formats, ['json', 'json-planted'])
      assert.deepEqual(results.settings.calibrate, { side, us: 200 })
      const [row] = results.rows
      // Every planted call spins 200 µs: that side's codec time per message cannot be less, the other's is JSON's own.
      const figures = row.figures['json-planted']
      assert.ok(figures[spins] >= 200, `${spins}: ${figures[spins]} µs`)
      assert.ok(figures[idle] < 100, `${idle}: ${figures[idle]} µs`)
      const { calibration } = results
      assert.deepEqual([calibration.side, calibration.plantedUs, calibration.rows.length], [side, 200, results.rows.length])
      const [found] = calibration.rows
      assert.deepEqual([found.test, found.profile], ['5 small', 'none'])
      assert.deepEqual(Object.keys(found.metrics), metrics)
      assert.deepEqual(Object.values(found.metrics).map((metric) => metric.expected), ['found', 'found', 'absent'])
      for (const [name, metric] of Object.entries(found.metrics)) {
        assert.equal(metric.call, row.verdicts['json-planted'][name].call, `${name}: the table's call`)
        assert.ok(metric.ci[0] <= metric.differenceUs && metric.differenceUs <= metric.ci[1], `${name}: ${JSON.stringify(metric)}`)
        if (metric.expected === 'found') assert.equal(metric.covers, metric.ci[0] <= 200 && metric.ci[1] >= 200, name)
      }
      const [p50, planted, other] = metrics.map((name) => found.metrics[name])
      assert.equal(found.found, p50.call === 'worse' && planted.call === 'worse')
      assert.equal(found.sized, p50.covers && planted.covers)
      assert.equal(found.falseCall, other.call === 'worse')
      assert.equal(calibration.lines.length, 1)
      assert.match(calibration.lines[0], new RegExp(`^5 small: planted \\+200 µs in ${where}: p50 [+-][\\d.]+ µs \\([+-][\\d.]+ to [+-][\\d.]+\\) \\w+, tells ±[\\d.]+ µs; ` +
        '.*: (found where planted, (about its size|but not its size \\(.*\\)), and not called worse on .* CPU.*|not found: this run could not tell it|called worse on .* CPU, where it was not planted: .*)$'))
      // Printed after the verdicts, and in results.md.
      assert.equal(run.stdout.trimEnd().split('\n').at(-1), calibration.lines[0])
      assert.match(fs.readFileSync(path.join(out, 'results.md'), 'utf8'), new RegExp(`^## Calibration\n\n- 5 small: planted \\+200 µs in ${where}: `, 'm'))
    })
  }
})

/** Every process below `root` now, as [pid, command line], from /proc. */
function processesUnder (root) {
  const parents = new Map()
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      // The command may hold spaces and parentheses: the fields after its closing parenthesis are fixed.
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1')
      const command = fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim()
      parents.set(Number(entry), [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]), command])
    } catch {} // gone while listed
  }
  const under = (pid) => [...parents].filter(([, [parent]]) => parent === pid).flatMap(([child, [, command]]) => [[child, command], ...under(child)])
  return under(root)
}
