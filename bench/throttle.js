// npm run bench:throttle — the experiment the project exists for: tests 4 and 5, JSON vs protobuf,
// on none, cable, 3g and 3gslow (userspace proxy backend), strict request/response; then the
// accuracy checks of the shaping itself at rtt 200 ms and 400 kbit/s each way. The figures the
// docs quote in sentences (frame sizes, what a frame costs on cable's uplink) are written with it.
import os from 'node:os'
import { PROFILES as NETWORKS } from '../lib/network/profiles.js'
import { startServer } from '../lib/server/server.js'
import { runClientProcess } from './support/client-process.js'
import { printRow, startResults } from './support/results.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 30)
const PROFILES = ['none', 'cable', '3g', '3gslow']
const results = startResults('throttle', 'npm run bench:throttle')
const columns = ['test', 'network', 'JSON p50 ms', 'JSON p99 ms', 'JSON msgs/s', 'pb p50 ms', 'pb p99 ms', 'pb msgs/s', 'pb/JSON p50']
const rows = []
/** Bytes of one message on the wire (frame header and mask included), by test and format. */
const frames = {}
const server = await startServer({ port: 0 })
const client = (format, test, messages, extra) => runClientProcess(format, [test, String(messages), '--url', server.url, '--throttle-backend', 'proxy', ...extra])

console.log(`# bench:throttle — ${MESSAGES} messages per run, 1 in flight, proxy backend`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|')
for (const test of ['4', '5']) {
  for (const profile of PROFILES) {
    const [json, pb] = [await client('json', test, MESSAGES, ['--throttle', profile, '--warmup', '2']), await client('protobuf', test, MESSAGES, ['--throttle', profile, '--warmup', '2'])]
    if (profile === 'none') frames[test] = { json: frameBytes(json), protobuf: frameBytes(pb) }
    rows.push([test, profile, json.latencyMs.p50, json.latencyMs.p99, json.rate, pb.latencyMs.p50, pb.latencyMs.p99, pb.rate, (pb.latencyMs.p50 / json.latencyMs.p50).toFixed(2)])
    printRow(rows.at(-1))
  }
}

const slow = ['--rtt', '200', '--up', '400', '--down', '400']
const small = await client('protobuf', '5', MESSAGES, slow)
const large = await client('json', '4', MESSAGES, slow)
const largeFrame = large.bytes.written / large.messages.sent
const expectedLarge = 200 + largeFrame * 8 / 400 + 5 * 8 / 400
const bulk = await client('json', '4', 300, [...slow, '--inflight', '50'])
const bulkKbits = bulk.bytes.written * 8 / bulk.durationMs
const accuracy = [
  `test 5 protobuf p50: ${small.latencyMs.p50} ms (target [200, 215])`,
  `test 4 JSON p50: ${large.latencyMs.p50} ms, expected ${expectedLarge.toFixed(1)} ms (${largeFrame} B frames): ${((large.latencyMs.p50 / expectedLarge - 1) * 100).toFixed(1)}%`,
  `bulk, test 4 JSON, 50 in flight: ${bulkKbits.toFixed(0)} kbit/s of frames on the uplink (target 400 within 5%): ${((bulkKbits / 400 - 1) * 100).toFixed(1)}%`
]
console.log('\n# accuracy at rtt 200 ms, 400 kbit/s each way')
for (const line of accuracy) console.log(line)
await server.close()
results.write({
  columns,
  rows,
  notes: [
    `${MESSAGES} messages per run after 2 warm-up, 1 in flight, userspace shaping proxy (--throttle-backend proxy); pb is protobuf`,
    `accuracy of the shaping at rtt 200 ms, 400 kbit/s each way: ${accuracy.join('; ')}`
  ],
  figures: figuresOf(frames, NETWORKS.cable)
})

function frameBytes (report) {
  return Math.round(report.bytes.written / report.messages.sent)
}

/**
 * What the docs say in sentences: each frame's size, and how long test 4's frames take to
 * serialise on cable's uplink, beside its round trip.
 */
function figuresOf (frames, cable) {
  const int = (value) => Math.round(value).toLocaleString('en-US')
  const serialiseMs = (bytes) => int(bytes * 8 / cable.up) // kbit/s: bits per ms
  return {
    'test4-json-bytes': int(frames['4'].json),
    'test4-protobuf-bytes': int(frames['4'].protobuf),
    'test5-json-bytes': int(frames['5'].json),
    'test5-protobuf-bytes': int(frames['5'].protobuf),
    'test4-json-kb': (frames['4'].json / 1000).toFixed(1),
    'test4-json-cable-ms': serialiseMs(frames['4'].json),
    'test4-protobuf-cable-ms': serialiseMs(frames['4'].protobuf),
    'cable-up-mbits': String(cable.up / 1000),
    'cable-rtt-ms': String(cable.rtt)
  }
}
