// The figures docs-results reads off a result file's own table, for the sentences of the docs that
// quote them (<!-- figure:NAME.KEY -->): by result name, then key, each a function of the result.

/**
 * Figures read off a result file's own table, for results whose writer records none (a comparison
 * recorded with --from-compare): by result name, then key.
 */
export const TABLE_FIGURES = {
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
    'people-json-bytes': (result) => rawBytes(result, 'people', 'json').toLocaleString('en-US'),
    'people-protobuf': (result) => megabytes(rawBytes(result, 'people', 'protobuf')),
    'people-saved': (result) => megabytes(rawBytes(result, 'people', 'json') - rawBytes(result, 'people', 'protobuf')),
    // The repeated message deflated against its copy, over every format and test but people (one message over the window).
    'repeated-deflated-range': (result) => `${spread(result.rows.filter(([test]) => test !== 'people').map((row) => row[result.columns.indexOf('repeated deflated')]), String)} B`
  },
  wire: {
    // JSON's wire bytes per payload byte with a stream, over the tests but the small one (its frame header weighs as much).
    'json-stream-range': (result) => percentRange(result.rows.filter(([test, format, payload]) => format === 'json' && payload.startsWith('stream') && test !== '5 small').map((row) => row[5])),
    // The same with one message repeated.
    'json-repeated-range': (result) => percentRange(result.rows.filter(([test, format, payload]) => format === 'json' && payload === 'one message repeated' && test !== '5 small').map((row) => row[5]))
  },
  rate: {
    // At 1000/s: the generator's own lateness with Node's timers, and what each pacing costs the client.
    'timer-lateness': (result) => rateCell(result, '1,000', 'timer', 'corrected - uncorrected p50').replace(/^\+/, ''),
    'timer-p50': (result) => rateCell(result, '1,000', 'timer', 'p50 corrected'),
    'precise-lag-p50': (result) => rateCell(result, '1,000', 'precise', 'send lag p50'),
    'precise-lag-p99': (result) => rateCell(result, '1,000', 'precise', 'send lag p99'),
    'spin-lag-p99': (result) => rateCell(result, '1,000', 'spin', 'send lag p99'),
    'spin-lag-p50': (result) => rateCell(result, '1,000', 'spin', 'send lag p50'),
    // What spin pacing's client used at 1000/s, all its threads.
    'spin-cpu': (result) => rateCell(result, '1,000', 'spin', 'client CPU'),
    'precise-excess': (result) => rateCell(result, '1,000', 'precise', 'CPU vs timer'),
    'spin-excess': (result) => rateCell(result, '1,000', 'spin', 'CPU vs timer'),
    'precise-5000': (result) => rateCell(result, '5,000', 'precise', 'CPU vs timer'),
    'precise-lag-p50-5000': (result) => rateCell(result, '5,000', 'precise', 'send lag p50'),
    'timer-lag-p50-5000': (result) => rateCell(result, '5,000', 'timer', 'send lag p50'),
    'precise-lag-p50-20000': (result) => rateCell(result, '20,000', 'precise', 'send lag p50'),
    'timer-lag-p50-20000': (result) => rateCell(result, '20,000', 'timer', 'send lag p50'),
    'precise-20000': (result) => rateCell(result, '20,000', 'precise', 'CPU vs timer'),
    // Realtime pacing (where real-time priority was permitted): its send lag's p99 and its CPU over timer pacing.
    'realtime-lag-p99': (result) => rateCell(result, '1,000', 'realtime', 'send lag p99') ?? 'not run: real-time priority not permitted',
    'realtime-excess': (result) => rateCell(result, '1,000', 'realtime', 'CPU vs timer') ?? 'not run',
    'realtime-lag-p99-5000': (result) => rateCell(result, '5,000', 'realtime', 'send lag p99') ?? 'not run',
    // How late a thread asleep in Atomics.wait wakes here: the floor under a sleeping pacer's p99.
    'sleeper-floor': ({ notes }) => /a thread sleeping 1 ms at a time.*?times a second/.exec(notes.join(' '))[0],
    // The same sleeper at real-time priority: what is left of the floor once the scheduler wakes it first.
    'realtime-floor': ({ notes }) => /the same thread at real-time priority.*?times a second|real-time priority not permitted here/.exec(notes.join(' '))[0],
    // The send lag's p99 of the runs the report called saturated: a generator past its CPU.
    'saturated-lag-p99': ({ columns, rows }) => rows.filter((row) => row[columns.indexOf('saturated')] === 'yes')
      .map((row) => `${(Number.parseFloat(row[columns.indexOf('send lag p99')]) / 1000).toFixed(1)} ms at ${row[0]}/s`).join(', ')
  },
  verdicts: {
    // This commit's A/A runs: the false calls among their timed cells (every one a false call).
    'false-calls': ({ columns, rows }) => {
      const row = rows.find((candidate) => candidate[0] === 'this commit')
      const cell = (column) => row[columns.indexOf(column)]
      return `${cell('false calls')} false calls in ${cell('timed cells')} timed cells over ${cell('A/A runs')} runs`
    }
  },
  reconnect: {
    // Over the storms: how long the server was away, and the attempts the backoff alone would make (in brackets).
    'server-away': (result) => `${spread(cellsOf(result, 'server back after ms').map(Number), (ms) => ms.toLocaleString('en-US'))} ms`,
    'backoff-attempts': (result) => spread(numbersIn(result, 'attempts refused (the backoff alone)', 1), (n) => n.toLocaleString('en-US')),
    // The attempts the client made while the server was away, and how late they started at the median.
    'attempts-made': (result) => spread(numbersIn(result, 'attempts refused (the backoff alone)', 0), (n) => n.toLocaleString('en-US')),
    'late-p50': (result) => `${spread(numbersIn(result, 'attempts late p50/p99 ms', 0), (ms) => ms.toLocaleString('en-US'))} ms`,
    // The busiest 100 ms as a share of the connections: the backoff alone, what the client saw open, what the server accepted.
    'backoff-peak': (result) => `${spread(numbersIn(result, 'busiest 100 ms: the backoff alone', 1), String)}%`,
    'client-peak': (result) => `${spread(numbersIn(result, 'busiest 100 ms: client saw open', 1), String)}%`,
    'server-peak': (result) => `${spread(numbersIn(result, 'busiest 100 ms: server accepted', 1), String)}%`
  },
  'shaping-check': {
    // The proxy's rate against the kernel's, both counted on the wire: its range over the rates tried.
    'wire-agreement': (result) => spread(cellsOf(result, 'proxy / kernel on the wire').map(Number), (ratio) => ratio.toFixed(3))
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

/** A column's cells, row by row. */
function cellsOf ({ columns, rows }, column) {
  return rows.map((row) => row[columns.indexOf(column)])
}

/** The nth number in each cell of a column, as in `4466 (23029)` or `669 (13.4%)`. */
function numbersIn (result, column, nth) {
  return cellsOf(result, column).map((cell) => Number(String(cell).match(/[\d.]+/g)[nth]))
}

/** `least-greatest` of some values, each as format gives it. */
function spread (values, format) {
  return `${format(Math.min(...values))}-${format(Math.max(...values))}`
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
  return row?.[columns.indexOf(column)]
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
