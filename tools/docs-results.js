#!/usr/bin/env node
// npm run docs:results — fills the generated regions of README.md and docs/*.md:
//   <!-- results:NAME --> ... <!-- /results:NAME -->  a table from docs/results/NAME.json, with the
//                                                      command, machine, date and duration under it
//   <!-- help:NAME --> ... <!-- /help:NAME -->        a command's --help output (see HELP below)
//   <!-- figure:NAME.KEY -->...<!-- /figure -->         one figure in a sentence: figures[KEY] of
//                                                      docs/results/NAME.json, as the bench wrote it,
//                                                      or else one read off its table (TABLE_FIGURES)
//   <!-- file:PATH --> ... <!-- /file:PATH -->        a file of the project as a code block: an
//                                                      example the tests run, shown as it is
// Options:
//   --check                   change nothing; exit 1 naming the docs that are out of date
//   --from-compare <file>     first record an `npm run compare` results.json as docs/results/compare.json
//                             (the verdicts, with a calibration's words as its figures: medium-p50,
//                             medium-verdict, ...) and compare-figures.json (the figures); --name picks
//                             another name than compare, --command states the command if it had options
//                             this script cannot see (it reads them back from the results), --note
//                             adds a sentence to the notes (e.g. how busy the machine was)
//   --root <dir>              the project copy whose README.md, docs/ and docs/results/ to use
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs, promisify } from 'node:util'
import { UsageError, runMain } from '../lib/errors.js'
import { PROJECT_ROOT } from '../lib/processes.js'
import { REFERENCE_SERVER_NAMES } from '../lib/server/reference.js'

/** The commands whose --help docs/cli.md shows, by marker name: the arguments given to node. */
const HELP = {
  server: ['server.js', '--help'],
  client_json: ['client_json.js', '--help'],
  client: ['client.js', '--help'],
  compare: ['bin/compare.js', '--help'],
  capacity: ['bin/capacity.js', '--help'],
  merge: ['bin/merge.js', '--help'],
  'shaping-proxy': ['bin/shaping-proxy.js', '--help'],
  pbjson: ['bin/pbjson.js', '--help'],
  'pbjson-infer': ['bin/pbjson.js', 'infer', '--help'],
  'pbjson-check': ['bin/pbjson.js', 'check', '--help']
}
const REGION = /<!-- (results|help|file):([\w./-]+) -->\n[^]*?<!-- \/\1:\2 -->/g
const FIGURE = /<!-- figure:([\w-]+)\.([\w-]+) -->[^<\n]*<!-- \/figure -->/g

/**
 * Figures read off a result file's own table, for results whose writer records none (a comparison
 * recorded with --from-compare): by result name, then key.
 */
const TABLE_FIGURES = {
  compare: {
    // The first format's wire bytes against the baseline, on loopback: the range over the tests, and people's.
    'wire-range': (result) => {
      const ratios = wireRatios(result).filter(([test]) => test !== 'people').map(([, ratio]) => ratio)
      return `${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x`
    },
    'wire-people': (result) => `${wireRatios(result).find(([test]) => test === 'people')[1].toFixed(2)}x`,
    // A time or CPU column over the tests but people: the range of its ratios and how many were called better.
    'p50-calls': (result) => columnCalls(result, 'p50'),
    'rate-calls': (result) => columnCalls(result, 'msgs/s'),
    'client-cpu-calls': (result) => columnCalls(result, 'client CPU/msg'),
    'server-cpu-calls': (result) => columnCalls(result, 'server CPU/msg'),
    'server-codec-calls': (result) => columnCalls(result, 'server codec/msg'),
    'people-p50': (result) => cellOf(result, 'people', 'p50'),
    'people-server-cpu': (result) => cellOf(result, 'people', 'server CPU/msg'),
    'medium-server-cpu': (result) => cellOf(result, '3 medium', 'server CPU/msg'),
    // How many times faster the second format's codec was on one test: the inverse of its codec ratio, with its interval.
    'person-server-cpu': (result) => cellOf(result, 'person', 'server CPU/msg'),
    'person-codec-speedup': (result) => speedupOf(result, 'person', 'server codec/msg'),
    'people-codec-speedup': (result) => speedupOf(result, 'people', 'server codec/msg'),
    'people-server-cpu-speedup': (result) => speedupOf(result, 'people', 'server CPU/msg'),
    // From a comparison's figures table: each test's server CPU and codec time per message, format by format.
    'server-cpu-us': (result) => perFormat(result, 'server CPU µs/msg', 'µs'),
    'server-codec-us': (result) => perFormat(result, 'server codec µs/msg', 'µs'),
    'wire-bytes': (result) => perFormat(result, 'wire B/msg', 'B')
  },
  size: {
    // JSON deflated in a stream, as a share of its raw size: the range over the tests with a stream (not people's one message).
    'json-stream-range': (result) => percentRange(result.rows.filter(([test, format]) => format === 'json' && test !== 'people').map((row) => row[8])),
    // Protobuf against JSON on test 4 and on people: raw, and both deflated in a stream.
    'large-raw': vsJson('4 large', 'vs json'),
    'large-stream': vsJson('4 large', 'stream vs json'),
    'people-raw': vsJson('people', 'vs json'),
    'people-stream': vsJson('people', 'stream vs json'),
    // people's one message in JSON and in protobuf, and what protobuf saves on it.
    'people-json': (result) => megabytes(rawBytes(result, 'people', 'json')),
    'people-protobuf': (result) => megabytes(rawBytes(result, 'people', 'protobuf')),
    'people-saved': (result) => megabytes(rawBytes(result, 'people', 'json') - rawBytes(result, 'people', 'protobuf'))
  },
  wire: {
    // JSON's wire bytes per payload byte with a stream, over the tests but the small one (its frame header weighs as much).
    'json-stream-range': (result) => percentRange(result.rows.filter(([test, format, payload]) => format === 'json' && payload.startsWith('stream') && test !== '5 small').map((row) => row[5]))
  },
  rate: {
    // At 1000/s: the generator's own lateness with Node's timers, and what each pacing costs the client.
    'timer-lateness': (result) => rateCell(result, '1,000', 'timer', 'corrected - uncorrected p50').replace(/^\+/, ''),
    'timer-p50': (result) => rateCell(result, '1,000', 'timer', 'p50 corrected'),
    'precise-lag-p50': (result) => rateCell(result, '1,000', 'precise', 'send lag p50'),
    'precise-lag-p99': (result) => rateCell(result, '1,000', 'precise', 'send lag p99'),
    'spin-lag-p99': (result) => rateCell(result, '1,000', 'spin', 'send lag p99'),
    'precise-excess': (result) => rateCell(result, '1,000', 'precise', 'CPU vs timer'),
    'spin-excess': (result) => rateCell(result, '1,000', 'spin', 'CPU vs timer'),
    'precise-5000': (result) => rateCell(result, '5,000', 'precise', 'CPU vs timer'),
    'precise-lag-p50-5000': (result) => rateCell(result, '5,000', 'precise', 'send lag p50'),
    'precise-20000': (result) => rateCell(result, '20,000', 'precise', 'CPU vs timer'),
    // How late a thread asleep in Atomics.wait wakes here: the floor under a sleeping pacer's p99.
    'sleeper-floor': ({ notes }) => /a thread sleeping 1 ms at a time.*?times a second/.exec(notes.join(' '))[0],
    // The send lag's p99 of the runs the report called saturated: a generator past its CPU.
    'saturated-lag-p99': ({ columns, rows }) => rows.filter((row) => row[columns.indexOf('saturated')] === 'yes')
      .map((row) => `${(Number.parseFloat(row[columns.indexOf('send lag p99')]) / 1000).toFixed(1)} ms at ${row[0]}/s`).join(', ')
  },
  hosts: {
    // The merged row: every connection, and the rate of one message per connection per second.
    connections: (result) => mergedHosts(result).connections.toLocaleString('en-US'),
    'per-connection-rate': (result) => String(mergedHosts(result).rate / mergedHosts(result).connections)
  }
}

/** `3 medium 82.8 µs for json, 71.2 µs for protobuf; ...`: a column of a figures table, per test and format (ratio rows left out). */
function perFormat ({ columns, rows }, column, unit) {
  const tests = []
  for (const row of rows) {
    const format = row[columns.indexOf('format')]
    if (format.includes('/')) continue
    if (row[columns.indexOf('test')]) tests.push({ test: row[columns.indexOf('test')], cells: [] })
    tests.at(-1).cells.push(`${row[columns.indexOf(column)]} ${unit} for ${format}`)
  }
  return tests.map(({ test, cells }) => `${test} ${cells.join(', ')}`).join('; ')
}

/** `15-27%` from cells such as `27.3%`: the whole percents around their least and greatest. */
function percentRange (cells) {
  const values = cells.map((cell) => Number.parseFloat(cell))
  return `${Math.floor(Math.min(...values))}-${Math.ceil(Math.max(...values))}%`
}

/** A bench:size row of a test in a format (protobuf unless named). */
function sizeRow (result, test, format = 'protobuf') {
  return result.rows.find((row) => row[0] === test && row[1] === format)
}

/** A figure reading one column of a test's protobuf row in a bench:size result (a ratio against JSON). */
function vsJson (test, column) {
  return (result) => sizeRow(result, test)[result.columns.indexOf(column)]
}

/** A test's raw bytes per message in a format, from a bench:size result. */
function rawBytes (result, test, format) {
  return sizeRow(result, test, format)[result.columns.indexOf('bytes')]
}

/** `12.9 MB` from a count of bytes (decimal megabytes, as the docs quote payload sizes). */
function megabytes (bytes) {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

/** One cell of a bench:rate row, by its target rate as printed (`1,000`), its pacing and the column's name. */
function rateCell ({ columns, rows }, target, pacing, column) {
  const row = rows.find((candidate) => candidate[0] === target && candidate[columns.indexOf('pacing')] === pacing)
  return row[columns.indexOf(column)]
}

/** The merged row of a bench:hosts result: its connections and the rate asked for (--rate of its command). */
function mergedHosts ({ columns, rows, command }) {
  const merged = rows.find((row) => row[0] === 'merged')
  return { connections: merged[columns.indexOf('connections')], rate: Number(/--rate (\d+)/.exec(command)[1]) }
}

/** `0.74x to 0.92x, better on 7 of 7 tests`: one column of a comparison's loopback rows, people left out. */
function columnCalls ({ columns, rows }, column) {
  const cells = rows.filter((row) => row[columns.indexOf('network')] === 'loopback' && row[columns.indexOf('test')] !== 'people')
    .map((row) => row[columns.indexOf(column)])
  const ratios = cells.map((cell) => Number.parseFloat(cell))
  const better = cells.filter((cell) => / better/.test(cell)).length
  return `${Math.min(...ratios).toFixed(2)}x to ${Math.max(...ratios).toFixed(2)}x, called better on ${better} of ${cells.length} tests`
}

/** One cell of a comparison's loopback rows, as printed: `2.11x (1.65-2.70) worse`. */
function cellOf ({ columns, rows }, test, column) {
  const row = rows.find((candidate) => candidate[columns.indexOf('test')] === test && candidate[columns.indexOf('network')] === 'loopback')
  return row[columns.indexOf(column)].replace(/, ±.*$/, '')
}

/** `3.4x (2.9-4.0)`: how many times faster, from a cell such as `0.29x (0.25-0.34) better` (its ratio and interval inverted). */
function speedupOf (result, test, column) {
  const [ratio, low, high] = cellOf(result, test, column).match(/[\d.]+/g).map(Number)
  return `${(1 / ratio).toFixed(1)}x (${(1 / high).toFixed(1)}-${(1 / low).toFixed(1)})`
}

/** [test, ratio] of a comparison's wire-bytes column, loopback rows of the first format compared. */
function wireRatios ({ columns, rows }) {
  const wire = columns.indexOf('wire bytes')
  const first = rows[0][columns.indexOf('format')]
  return rows.filter((row) => row[columns.indexOf('network')] === 'loopback' && row[columns.indexOf('format')] === first)
    .map((row) => [row[columns.indexOf('test')], Number.parseFloat(row[wire])])
}

const USAGE = 'Usage: npm run docs:results [-- --check] [-- --from-compare <results.json> [--name NAME] [--command "..."] [--note "..."]] [--root <dir>]'

async function main () {
  const { values } = parseOptions({
    options: {
      help: { type: 'boolean', short: 'h', default: false },
      check: { type: 'boolean', default: false },
      'from-compare': { type: 'string' },
      name: { type: 'string', default: 'compare' },
      command: { type: 'string' },
      note: { type: 'string', multiple: true, default: [] },
      root: { type: 'string', default: PROJECT_ROOT }
    }
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n\nFills README.md and docs/*.md between <!-- results:NAME --> markers from docs/results/NAME.json,\n` +
      'between <!-- help:NAME --> markers with that command\'s --help, and each <!-- figure:NAME.KEY --> with that figure of NAME.json.\n' +
      '--check changes nothing and exits 1 when a doc is out of date.\n')
    return 0
  }
  const root = path.resolve(values.root)
  const resultsDir = path.join(root, 'docs/results')
  if (values['from-compare']) {
    if (values.check) throw new UsageError('--check and --from-compare do not go together: --check changes nothing')
    for (const file of await recordComparison(values['from-compare'], values, resultsDir)) {
      process.stdout.write(`wrote ${path.relative(process.cwd(), file)}\n`)
    }
  }
  const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)]
    .filter((doc) => fs.existsSync(path.join(root, doc)))
  const texts = Object.fromEntries(docs.map((doc) => [doc, fs.readFileSync(path.join(root, doc), 'utf8')]))
  const helpNeeded = new Set(Object.values(texts).flatMap((text) => [...text.matchAll(REGION)].filter((m) => m[1] === 'help').map((m) => m[2])))
  const help = await helpTexts([...helpNeeded])
  const shown = new Set()
  const stale = []
  const resultOf = (doc, marker, name) => {
    const file = path.join(resultsDir, `${name}.json`)
    if (!fs.existsSync(file)) throw new Error(`${doc}: <!-- ${marker} --> needs docs/results/${name}.json, which does not exist`)
    shown.add(`${name}.json`)
    return JSON.parse(fs.readFileSync(file, 'utf8'))
  }
  for (const doc of docs) {
    const updated = texts[doc].replace(REGION, (_, kind, name) => {
      if (kind === 'help') {
        if (!help[name]) throw new Error(`${doc}: <!-- help:${name} --> names no known command: expected one of ${Object.keys(HELP).join(', ')}`)
        return region(kind, name, help[name])
      }
      if (kind === 'file') return region(kind, name, `\`\`\`${path.extname(name).slice(1)}\n${fs.readFileSync(path.join(root, name), 'utf8')}\`\`\``)
      return region(kind, name, renderResults(resultOf(doc, `results:${name}`, name)))
    }).replace(FIGURE, (_, name, key) => {
      const result = resultOf(doc, `figure:${name}.${key}`, name)
      // Every recorded comparison (compare, compare-people, ...) has the figures of a comparison's table.
      const figure = result.figures?.[key] ?? (TABLE_FIGURES[name] ?? TABLE_FIGURES[name.replace(/^compare-.*/, 'compare')])?.[key]?.(result)
      if (figure === undefined) throw new Error(`${doc}: <!-- figure:${name}.${key} --> names no figure of docs/results/${name}.json`)
      return `<!-- figure:${name}.${key} -->${figure}<!-- /figure -->`
    })
    if (updated !== texts[doc]) stale.push([doc, updated])
  }
  // Written only once every region rendered, so a missing result file leaves every doc as it was.
  if (!values.check) for (const [doc, updated] of stale) fs.writeFileSync(path.join(root, doc), updated)
  if (values.check) {
    if (stale.length) {
      process.stderr.write(`out of date with docs/results and --help: ${stale.map(([doc]) => doc).join(', ')} (run npm run docs:results)\n`)
      return 1
    }
    process.stdout.write(`up to date: ${docs.length} docs\n`)
    return 0
  }
  const unshown = fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir).filter((f) => f.endsWith('.json') && !shown.has(f)) : []
  if (unshown.length) process.stderr.write(`note: shown in no doc: ${unshown.map((f) => `docs/results/${f}`).join(', ')}\n`)
  process.stdout.write(stale.length ? `updated ${stale.map(([doc]) => doc).join(', ')}\n` : `up to date: ${docs.length} docs\n`)
  return 0
}

/** parseArgs, with its errors as one usage line. */
function parseOptions (config) {
  try {
    return parseArgs(config)
  } catch (err) {
    throw new UsageError(`${err.message} (${USAGE})`)
  }
}

const region = (kind, name, body) => `<!-- ${kind}:${name} -->\n${body}\n<!-- /${kind}:${name} -->`

/** Each named command's --help, run from the project in a plain environment (no PORT, token or width). */
async function helpTexts (names) {
  const env = { ...process.env }
  for (const key of ['PORT', 'BENCH_TOKEN', 'COLUMNS', 'DEBUG']) delete env[key]
  const outputs = await Promise.all(names.map(async (name) => {
    if (!HELP[name]) return [name, null]
    const { stdout } = await promisify(execFile)(process.execPath, HELP[name], { cwd: PROJECT_ROOT, env })
    const text = stdout.split('\n').map((line) => line.trimEnd()).join('\n').trimEnd()
    return [name, `\`\`\`text\n$ node ${HELP[name].join(' ')}\n${text}\n\`\`\``]
  }))
  return Object.fromEntries(outputs)
}

/**
 * A result document as markdown: the table, then one line with the command, the machine, the date
 * and the duration, then its notes.
 * @param {{command: string, machine: object, startedAt: string, durationMs: number, columns: string[],
 *   rows: Array<Array<string|number|null>>, notes?: string[]}} result
 * @returns {string}
 */
function renderResults ({ command, machine, startedAt, durationMs, columns, rows, notes = [] }) {
  const cell = (value) => String(value ?? '').replaceAll('|', '\\|')
  const numeric = /^([-+]?[\d,]*\.?\d+(e[-+]?\d+)?( ?(x|%|ms|s|MB|µs))?( ±[\d.]+%)?( \([\d.]+-[\d.]+\))?( ≈)?|\d+(\/\d+)+)$/
  const right = columns.map((_, i) => {
    const cells = rows.map((row) => String(row[i] ?? '')).filter((text) => !['', 'n/a', '-'].includes(text))
    return cells.length > 0 && cells.every((text) => numeric.test(text))
  })
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`
  const { cpus, model, memoryGiB, node, platform, loadAverage } = machine
  const where = [`${cpus} cores (${model})`, memoryGiB ? `${memoryGiB} GiB` : null, `Node ${node.replace(/^v?/, 'v')}`, platform]
    .filter(Boolean).join(', ')
  const load = loadAverage === undefined ? '' : `, load average ${loadAverage} at the start`
  const date = `${startedAt.slice(0, 10)} ${startedAt.slice(11, 16)} UTC`
  return [
    line(columns),
    `|${right.map((r) => r ? '---:' : '---').join('|')}|`,
    ...rows.map(line),
    '',
    `\`${command}\` on ${where}${load}; ${date}, ${duration(durationMs)}.`,
    ...(notes.length ? ['', notes.map((note) => note.trim().replace(/([^.])$/, '$1.')).join(' ')] : [])
  ].join('\n')
}

function duration (ms) {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${(ms / 1000).toFixed(1)} s`
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

/**
 * Records an `npm run compare` results document as two result files: NAME.json, the verdict of
 * each format against the first per test and network (ratios with their 95% intervals), and
 * NAME-figures.json, the figures table of results.md.
 * @returns {Promise<string[]>} the files written
 */
async function recordComparison (file, { name, command, note }, resultsDir) {
  let results
  try {
    results = JSON.parse(fs.readFileSync(file, 'utf8'))
  } catch (err) {
    throw new UsageError(`--from-compare: cannot read ${file}: ${err.code ?? err.message}`)
  }
  if (!Array.isArray(results.rows) || !results.settings || !results.formats) throw new UsageError(`--from-compare: ${file} is not an npm run compare results.json`)
  const { METRICS } = await import('../lib/compare/statistics.js')
  const { cellText, machineNote, ratioMeaning, tableCells, verdictMeaning } = await import('../lib/compare/results.js')
  const { formats, rows, settings } = results
  const metrics = Object.keys(METRICS)
  const verdictRows = rows.flatMap((row) => formats.slice(1).map((label) => {
    const verdicts = row.verdicts?.[label] ?? {}
    const called = (call) => metrics.filter((metric) => verdicts[metric]?.call === call).map((metric) => METRICS[metric].label).join(', ')
    const call = row.calls?.[label] ?? 'n/a'
    return [
      row.test, row.profile === 'none' ? 'loopback' : row.profile, `${label} vs ${formats[0]}`,
      ...metrics.map((metric) => verdicts[metric] ? cellText(verdicts[metric]) : 'n/a'),
      call === 'mixed' ? `mixed (better: ${called('better')}; worse: ${called('worse')})` : call
    ]
  }))
  const { machine: thisMachine, writeResultFile } = await import('../bench/results.js')
  const here = thisMachine()
  const m = results.machine
  const sameMachine = m.cpu === here.model && m.cores === here.cpus && `v${m.node}` === here.node
  const machine = { cpus: m.cores, model: m.cpu, memoryGiB: sameMachine ? here.memoryGiB : null, node: m.node, platform: m.platform }
  const startedAt = new Date(Date.parse(results.generatedAt) - (settings.elapsedMs ?? 0)).toISOString()
  const common = { command: command ?? await compareCommand(results), machine, startedAt, durationMs: settings.elapsedMs ?? 0 }
  const { header, body } = tableCells(rows, formats)
  const write = (document) => writeResultFile(document, resultsDir)
  return [
    write({
      name,
      ...common,
      columns: ['test', 'network', 'format', ...metrics.map((metric) => `${METRICS[metric].label}${METRICS[metric].unit ?? ''}`), 'verdict'],
      rows: verdictRows,
      ...(results.calibration && { figures: await calibrationFigures(rows, results.calibration) }),
      notes: [
        runSummary(settings, rows),
        ...(results.calibration?.lines.map((line) => `Calibration: ${line}.`) ?? []),
        verdictMeaning(results.family, settings.margin),
        ...(machineNote(results) ? [`Note: ${machineNote(results)}.`] : []),
        ...note
      ]
    }),
    write({
      name: `${name}-figures`,
      ...common,
      columns: header,
      rows: body,
      notes: [runSummary(settings, rows), `Figures are medians over the generations; ratios are ${ratioMeaning(formats)}, marked + better, - worse, = equivalent, ? inconclusive`, ...note]
    })
  ]
}

/**
 * A calibration as figures the docs quote, per test (and profile, where shaped): each metric's
 * difference in µs with its interval and call (medium-client-cpu), and the verdict (medium-verdict).
 */
async function calibrationFigures (rows, calibration) {
  const { calibrationWords } = await import('../lib/compare/calibration.js')
  const kebab = (name) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)
  return Object.fromEntries(calibrationWords(calibration).flatMap(({ profile, metrics, verdict }, i) => {
    const key = `${rows[i].testName}${profile === 'none' ? '' : `-${profile}`}`
    return [...Object.entries(metrics).map(([name, words]) => [`${key}-${kebab(name)}`, words]), [`${key}-verdict`, verdict]]
  }))
}

/** How a comparison ran, in one sentence: generations, batches, load shape, and what the machine was doing. */
function runSummary ({
  trials, budgetMs, pinning, connections, inflight, rate, direction = 'up', compress, tls, repeat, startWarmupMs, warmupGenerations,
  ownServers = [], ownServersBytes, generations = []
}, rows) {
  const count = Math.max(0, ...rows.map((row) => row.generations))
  const loads = generations.map((generation) => generation.loadAverage).filter((value) => value !== null)
  const neighbours = generations.map((generation) => generation.neighbourCores).filter((value) => value !== null)
  const steals = generations.map((generation) => generation.stealCores).filter((value) => value != null)
  const how = trials ? `${trials} generations` : `${count} generations, as many as fit ${budgetMs / 1000} s`
  // A server's own warm-up (the JVM's) is stated; compare's default one goes without saying.
  const warmup = warmupGenerations ? ` (${startWarmupMs / 1000} s of each format per client, then ${warmupGenerations} generations)` : ''
  // Results recorded before the threshold was written into them say only that the servers were its own.
  const over = ownServersBytes ? `, its messages being over ${ownServersBytes / 1e6} MB` : ''
  const own = ownServers.length ? ` (${ownServers.join(', ')}: servers of its own${over})` : ''
  return `${how}, after unrecorded warm-ups${warmup}, on server processes${own} and per-test client processes that live for the whole run and ` +
    'swap formats between generations, every test in short batches ' +
    'that take turns (closed loop for latency and msgs/s, then open loop on one schedule for CPU and codec time); ' +
    (direction === 'fanout'
      ? `${connections} subscribers and one publisher at ${rate}/s`
      : `${connections} connection${connections === 1 ? '' : 's'} × ${inflight} in flight`) +
    `, direction ${direction}, permessage-deflate ${compress ? 'on' : 'off'}${repeat ? ', one message repeated' : ''}, servers on loopback` +
    `${tls ? ` over wss:// (${tls.version}, ${tls.cipher})` : ''}` +
    `${pinning ? `; CPUs: ${pinning}` : ''}` +
    (loads.length ? `; load average ${Math.min(...loads)}-${Math.max(...loads)}, other processes' CPU at most ${Math.max(...neighbours)} cores` : '') +
    (steals.length ? `, the hypervisor's steal at most ${Math.max(...steals)} cores` : '')
}

/** The command line that reproduces a comparison, read back from its results. */
async function compareCommand ({ formats, rows, settings, reports }) {
  const { DEFAULT_BUDGET_MS, DEFAULT_FORMATS } = await import('../lib/defaults.js')
  const { DEFAULT_EQUIVALENCE } = await import('../lib/compare/statistics.js')
  const { ALL_TESTS } = await import('../lib/payloads/catalog.js')
  const { plantArgument } = await import('../lib/compare/calibration.js')
  const args = []
  const asked = formats.map((label) => label.replace(/#\d+$/, ''))
  if (settings.calibrate) args.push('--calibrate', plantArgument(settings.calibrate))
  else if (asked.join() !== DEFAULT_FORMATS.join()) args.push('--formats', asked.join(','))
  const custom = reports.find((report) => report.payloadFile)
  const tests = [...new Set(rows.map((row) => row.testName))]
  if (custom) args.push('--payload', custom.payloadFile, ...(custom.schema && custom.schema !== 'inferred' ? ['--proto', '<file.proto>', '--type', custom.schema] : []))
  else if (tests.join() !== ALL_TESTS.join()) args.push('--tests', tests.join(','))
  if (settings.profiles.join() !== 'none') args.push('--throttle', settings.profiles.join(','))
  if (settings.trials) args.push('--trials', String(settings.trials))
  else if (settings.budgetAsked && settings.budgetAsked !== DEFAULT_BUDGET_MS) args.push('--budget', `${settings.budgetAsked / 1000}s`)
  if (settings.margin !== undefined && settings.margin !== DEFAULT_EQUIVALENCE) args.push('--equivalence', String(settings.margin * 100))
  if (settings.pinning?.startsWith('off')) args.push('--no-pin')
  if (settings.direction && settings.direction !== 'up') args.push('--direction', settings.direction)
  if (settings.compress) args.push('--compress')
  if (settings.tls) args.push('--tls')
  if (REFERENCE_SERVER_NAMES.includes(settings.server)) args.push('--server', settings.server)
  else if (settings.server && settings.server !== 'node') args.push('--server-command', `'${settings.server}'`)
  if (settings.serverArgs?.length) args.push(`--server-args='${settings.serverArgs.join(' ')}'`)
  if (settings.repeat) args.push('--repeat')
  if (settings.inflight !== 1) args.push('--inflight', String(settings.inflight))
  if (settings.connections !== 1) args.push('--connections', String(settings.connections))
  if (settings.messages) args.push('-n', String(settings.messages))
  return `npm run compare${args.length ? ` -- ${args.join(' ')}` : ''}`
}

runMain(main)
