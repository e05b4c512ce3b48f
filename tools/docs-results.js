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
//   <!-- commands:all --> ... <!-- /commands:all -->  the command that remakes each result file
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
import { REFERENCE_SERVER_NAMES } from '../lib/reference/servers.js'
import { TABLE_FIGURES } from './table-figures.js'
import { outdatedMethods } from '../lib/provenance.js'
import { methodsOf } from '../bench/support/methods.js'

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
const REGION = /<!-- (results|help|file|commands):([\w./-]+) -->\n[^]*?<!-- \/\1:\2 -->/g
const FIGURE = /<!-- figure:([\w-]+)\.([\w-]+) -->[^<\n]*<!-- \/figure -->/g

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
  const shown = new Map()
  const stale = []
  const resultOf = (doc, marker, name) => {
    const file = path.join(resultsDir, `${name}.json`)
    if (!fs.existsSync(file)) throw new Error(`${doc}: <!-- ${marker} --> needs docs/results/${name}.json, which does not exist`)
    if (!shown.has(`${name}.json`)) shown.set(`${name}.json`, JSON.parse(fs.readFileSync(file, 'utf8')))
    return shown.get(`${name}.json`)
  }
  for (const doc of docs) {
    const updated = texts[doc].replace(REGION, (_, kind, name) => {
      if (kind === 'help') {
        if (!help[name]) throw new Error(`${doc}: <!-- help:${name} --> names no known command: expected one of ${Object.keys(HELP).join(', ')}`)
        return region(kind, name, help[name])
      }
      if (kind === 'file') return region(kind, name, `\`\`\`${path.extname(name).slice(1)}\n${fs.readFileSync(path.join(root, name), 'utf8')}\`\`\``)
      if (kind === 'commands') return region(kind, name, `\`\`\`sh\n${remakeCommands(resultsDir).join('\n')}\n\`\`\``)
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
  const outdated = outdatedResults(shown)
  for (const line of outdated) process.stderr.write(`${line}\n`)
  if (values.check) {
    if (stale.length) {
      process.stderr.write(`out of date with docs/results and --help: ${stale.map(([doc]) => doc).join(', ')} (run npm run docs:results)\n`)
    }
    if (stale.length || outdated.length) return 1
    process.stdout.write(`up to date: ${docs.length} docs, every result from its command's current method\n`)
    return 0
  }
  const unshown = fs.existsSync(resultsDir) ? fs.readdirSync(resultsDir).filter((f) => f.endsWith('.json') && !shown.has(f)) : []
  if (unshown.length) process.stderr.write(`note: shown in no doc: ${unshown.map((f) => `docs/results/${f}`).join(', ')}\n`)
  process.stdout.write(stale.length ? `updated ${stale.map(([doc]) => doc).join(', ')}\n` : `up to date: ${docs.length} docs\n`)
  return 0
}

/**
 * One line for each result shown whose method is older than its command's now (lib/provenance.js),
 * naming the command that remakes it.
 * @param {Map<string, object>} results by file name
 * @returns {string[]}
 */
function outdatedResults (results) {
  return [...results].flatMap(([file, result]) => {
    const older = outdatedMethods(result, methodsOf(result.command ?? ''))
    if (!older.length) return []
    const methods = older.map(({ name, version, since, recorded }) =>
      `${name} ${recorded === null ? `before version ${version} (${since.slice(0, 10)})` : `version ${recorded}, now ${version}`}`)
    return [`stale: docs/results/${file} was measured with an older method (${methods.join('; ')}): remake it with ${result.command}`]
  })
}

/**
 * The command that remakes each result file, as it recorded it, once each: a comparison's with the
 * step that records it here (--from-compare, its name unless compare's own).
 * @param {string} resultsDir
 * @returns {string[]}
 */
function remakeCommands (resultsDir) {
  const names = fs.readdirSync(resultsDir).filter((file) => file.endsWith('.json') && !file.endsWith('-figures.json'))
    .map((file) => path.basename(file, '.json')).sort()
  const lines = names.map((name) => {
    const { command } = JSON.parse(fs.readFileSync(path.join(resultsDir, `${name}.json`), 'utf8'))
    if (!/^npm run compare\b/.test(command)) return command
    return `${command} && npm run docs:results -- --from-compare compare-report/results.json${name === 'compare' ? '' : ` --name ${name}`}`
  })
  return [...new Set(lines)]
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
  const { machine: thisMachine, writeResultFile } = await import('../bench/support/results.js')
  const here = thisMachine()
  const m = results.machine
  const sameMachine = m.cpu === here.model && m.cores === here.cpus && `v${m.node}` === here.node
  const machine = { cpus: m.cores, model: m.cpu, memoryGiB: sameMachine ? here.memoryGiB : null, node: m.node, platform: m.platform }
  const startedAt = new Date(Date.parse(results.generatedAt) - (settings.elapsedMs ?? 0)).toISOString()
  const provenance = { methods: results.methods, commit: results.commit }
  const common = { command: command ?? await compareCommand(results), ...provenance, machine, startedAt, durationMs: settings.elapsedMs ?? 0 }
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
