// npm run bench:codec — encode, decode and encode+decode ops/s for every test and codec, with
// tinybench (warm-up, mean throughput, relative margin of error); beside each, its bytes and
// permessage-deflate bytes, for the wire-size vs CPU trade-off. JSON runs twice: as strings
// (JSON.stringify / JSON.parse) and as "JSON buffer" (Buffer.from of the string, decoded from a
// Buffer: what goes on the wire). Every other codec decodes from a Buffer, as it arrives.
import os from 'node:os'
import zlib from 'node:zlib'
import { Bench } from 'tinybench'
import { TESTS, loadPayload } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { perSecond } from '../lib/display.js'
import { BENCH_FORMATS, encodedPayload, selectedFormats, selectedTests } from './support/formats.js'
import { printRow, startResults } from './support/results.js'

const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 300)
// BENCH_TESTS=1,people picks tests; every test by default. BENCH_FORMATS picks codecs; all by default.
const SELECTED = selectedTests(TESTS)
const FORMATS = selectedFormats(BENCH_FORMATS)
const deflated = (bytes) => zlib.deflateRawSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length - 4
let sink // keeps results alive so the engine cannot drop the work

async function contenders (test) {
  const encoded = await Promise.all(FORMATS.map((format) => encodedPayload(format, test)))
  return FORMATS.flatMap((format, i) => {
    const { codec, message, frame } = encoded[i]
    const row = { name: format, encode: () => codec.encode(message), decode: () => codec.decode(frame), bytes: frame }
    if (format !== 'json') return [row]
    const payload = loadPayload(test)
    const text = JSON.stringify(payload)
    return [
      { ...row, decode: () => JSON.parse(text) },
      { ...row, name: 'json buffer', encode: () => Buffer.from(JSON.stringify(payload)) }
    ]
  })
}

const results = startResults('codec', 'npm run bench:codec')
const columns = ['test', 'codec', 'bytes', 'deflate bytes', 'encode ops/s', 'decode ops/s', 'enc+dec ops/s', `enc+dec vs ${(await contenders(SELECTED[0]))[0].name}`]
const table = []
const figures = {}
console.log(`# bench:codec — tinybench, ${TIME_MS} ms per task; ops/s (± relative margin of error)`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const test of SELECTED) {
  const rows = await contenders(test)
  // At least 10 samples (tinybench's default is 64: minutes for the 12.9 MB people payload).
  const bench = new Bench({ time: TIME_MS, warmupTime: 100, iterations: 10, warmupIterations: 2 })
  for (const row of rows) {
    bench.add(`${row.name} encode`, () => { sink = row.encode() })
    bench.add(`${row.name} decode`, () => { sink = row.decode() })
    bench.add(`${row.name} both`, () => { sink = row.encode(); sink = row.decode() })
  }
  await bench.run()
  const throughput = (name) => bench.getTask(name).result.throughput
  const show = (name) => `${perSecond(throughput(name).mean)} ±${throughput(name).rme.toFixed(1)}%`
  const baseline = rows[0]
  const baselineBoth = throughput(`${baseline.name} both`).mean
  figures[`validation-${test.name}`] = validationCost(test, throughput)
  for (const row of rows) {
    table.push([testLabel(test), row.name, row.bytes.length, deflated(row.bytes), show(`${row.name} encode`), show(`${row.name} decode`), show(`${row.name} both`), `${(throughput(`${row.name} both`).mean / baselineBoth).toFixed(2)}x`])
    printRow(table.at(-1))
  }
}
results.write({
  columns,
  rows: table,
  figures,
  notes: [`tinybench: ${TIME_MS} ms and at least 10 samples per task after 100 ms of warm-up; ops/s is the mean, ± its relative margin of error. ` +
    '"json buffer" encodes to a Buffer and decodes from one, as a WebSocket sends and receives; protobuf is protobuf.js static code, ' +
    'protobuf-dynamic protobuf.js reflection']
})
if (sink === Symbol.for('never')) console.log(sink)

/**
 * What validating JSON against the test's schema costs a decoder, beside JSON.parse from a Buffer
 * (what arrives) and protobuf decode: the sentence the README's answer quotes. Undefined unless
 * all three ran.
 */
function validationCost (test, throughput) {
  const names = ['json buffer', 'json-validated', 'protobuf']
  if (!names.every((name) => FORMATS.includes(name.split(' ')[0]))) return undefined
  const [parse, validated, protobuf] = names.map((name) => (1e6 / throughput(`${name} decode`).mean).toFixed(1))
  return `decoding one message of test ${testLabel(test)} takes ${parse} µs with JSON.parse, ${validated} µs with JSON.parse and the schema's validator, ${protobuf} µs in protobuf.js`
}
