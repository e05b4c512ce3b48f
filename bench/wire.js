// npm run bench:wire — bytes on the socket with permessage-deflate, measured with real processes:
// `node server.js --compress` and one load client per row (`node client_json.js 4 2000 --compress
// --json`, the same with --repeat, and protobuf), every test with a stream. wire/payload is what the
// network carries per message against the encoded message: the stream's is what real traffic
// would cost; the repeated message's is the artifact of deflate matching each message against its
// identical predecessor. BENCH_MESSAGES (2000) and BENCH_TESTS (every test with a stream) override.
import { TESTS } from '../lib/payloads/catalog.js'
import { hasStream } from '../lib/payloads/streams.js'
import { startServerProcess } from '../lib/processes.js'
import { describePayload, testLabel } from '../lib/report/report.js'
import { runClientProcess } from './support/client-process.js'
import { selectedTests } from './support/formats.js'
import { printRow, startResults } from './support/results.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 2000)
const TESTS_RUN = selectedTests(TESTS.filter(hasStream))
const FORMATS = ['json', 'protobuf']

const results = startResults('wire', 'npm run bench:wire')
const columns = ['test', 'format', 'payload', 'B/msg', 'wire B/msg', 'wire/payload']
const rows = []
printRow(columns)
console.log('|---|---|---|---:|---:|---:|')
const server = await startServerProcess(['--compress'])
try {
  for (const test of TESTS_RUN) {
    for (const format of FORMATS) {
      for (const repeat of [false, true]) {
        const report = await runClientProcess(format, [test.name, String(MESSAGES), '--url', server.url, '--compress', ...(repeat ? ['--repeat'] : [])])
        if (!report.ok) throw new Error(`${format} ${test.name}: ${report.failure}`)
        const wire = report.bytes.written / report.messages.sent
        rows.push([testLabel(test), format, describePayload(report.payload).replace(/ \(.*\)$/, ''), report.bytes.payloadPerMessage, Math.round(wire),
          `${(wire / report.bytes.payloadPerMessage * 100).toFixed(1)}%`])
        printRow(rows.at(-1))
      }
    }
  }
} finally {
  await server.stop()
}
results.write({
  columns,
  rows,
  notes: [`${MESSAGES} messages per run, 1 in flight, direction up, permessage-deflate with context takeover (ws's default) on both ends; ` +
    'B/msg: the encoded message (the stream\'s mean); wire B/msg: bytes the client wrote on its socket per message (frame header and mask included); ' +
    'one message repeated is compressed against its identical predecessor every time']
})
