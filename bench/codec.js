// npm run bench:codec — encode, decode and encode+decode ops/s for every test: protobuf.js static
// (generated code), protobuf.js dynamic (reflection), JSON (string) and JSON buffer (Buffer.from of
// the string: what goes on the wire), with tinybench (warm-up, mean throughput, relative margin of
// error); beside each test, its permessage-deflate size, for the wire-size vs CPU trade-off.
import os from 'node:os'
import zlib from 'node:zlib'
import { Bench } from 'tinybench'
import { createCodec } from '../lib/codecs.js'
import { TESTS, loadPayload, resolveTest, testLabel } from '../lib/payloads.js'
import { perSecond } from '../lib/format.js'

const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 300)
// BENCH_TESTS=1,people picks tests; every test by default.
const SELECTED = process.env.BENCH_TESTS ? process.env.BENCH_TESTS.split(',').map(resolveTest) : TESTS
const deflated = (bytes) => zlib.deflateRawSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length - 4
let sink // keeps results alive so the engine cannot drop the work

function contenders (test) {
  const payload = loadPayload(test)
  const json = createCodec('json', test)
  const text = JSON.stringify(payload)
  const jsonBuffer = Buffer.from(text)
  const rows = [
    { name: 'JSON', encode: () => JSON.stringify(payload), decode: () => JSON.parse(text), bytes: jsonBuffer },
    { name: 'JSON buffer', encode: () => Buffer.from(JSON.stringify(payload)), decode: () => json.decode(jsonBuffer), bytes: jsonBuffer }
  ]
  for (const [name, format] of [['pb static', 'protobuf'], ['pb dynamic', 'protobuf-dynamic']]) {
    const codec = createCodec(format, test)
    const message = codec.prepare(payload)
    const frame = Buffer.from(codec.encode(message))
    rows.push({ name, encode: () => codec.encode(message), decode: () => codec.decode(frame), bytes: frame })
  }
  return rows
}

console.log(`# bench:codec — tinybench, ${TIME_MS} ms per task; ops/s (± relative margin of error)`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
console.log('| test | codec | bytes | deflate bytes | encode ops/s | decode ops/s | enc+dec ops/s | enc+dec vs JSON |')
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const test of SELECTED) {
  const rows = contenders(test)
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
  const jsonBoth = throughput('JSON both').mean
  for (const row of rows) {
    console.log(`| ${testLabel(test)} | ${row.name} | ${row.bytes.length} | ${deflated(row.bytes)} | ${show(`${row.name} encode`)} | ${show(`${row.name} decode`)} | ${show(`${row.name} both`)} | ${(throughput(`${row.name} both`).mean / jsonBoth).toFixed(2)}x |`)
  }
}
if (sink === Symbol.for('never')) console.log(sink)
