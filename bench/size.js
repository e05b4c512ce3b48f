// npm run bench:size — bytes per message for every test and format (BENCH_FORMATS, default JSON and
// protobuf), over the test's stream of varying messages (what runs send by default): raw, and with
// permessage-deflate two ways: each message deflated alone (no context takeover, or a first
// message) and the stream through one compressor (context takeover, ws's default). Beside them the
// one message repeated (--repeat) with context takeover: each copy refers back to the identical
// one before it, which no real stream allows. Ratios against the first format.
import { TESTS } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { deflatedAlone, deflatedInTurn } from './deflate.js'
import { encodedMessages, selectedFormats } from './formats.js'
import { printRow, startResults } from './results.js'

const FORMATS = selectedFormats(['json', 'protobuf'])
const baseline = FORMATS[0]
/** Copies of the one message sent before the one measured: the compressor has settled by then. */
const REPEATS = 3

const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length
const percent = (part, whole) => `${(part / whole * 100).toFixed(1)}%`

const results = startResults('size', 'npm run bench:size')
const columns = ['test', 'format', 'messages', 'bytes', `vs ${baseline}`, 'deflate alone', 'alone', 'deflate stream', 'stream',
  `stream vs ${baseline}`, 'repeated bytes', 'repeated deflated', 'repeated']
const rows = []
printRow(columns)
console.log(`|---|---|${'---:|'.repeat(columns.length - 2)}`)
for (const test of TESTS) {
  let first
  for (const format of FORMATS) {
    const { stream, repeated } = await encodedMessages(format, test)
    const bytes = mean(stream.map((frame) => frame.length))
    const alone = mean(stream.map(deflatedAlone))
    const inTurn = mean(await deflatedInTurn(stream))
    const repeatedDeflated = (await deflatedInTurn(Array(REPEATS).fill(repeated))).at(-1)
    first ??= { bytes, inTurn }
    rows.push([testLabel(test), format, stream.length, Math.round(bytes), (bytes / first.bytes).toFixed(2), Math.round(alone), percent(alone, bytes),
      Math.round(inTurn), percent(inTurn, bytes), (inTurn / first.inTurn).toFixed(2), repeated.length, repeatedDeflated, percent(repeatedDeflated, repeated.length)])
    printRow(rows.at(-1))
  }
}
results.write({
  columns,
  rows,
  notes: ['bytes: the mean over one cycle of the test\'s stream (people: its one message); deflate as ws compresses (raw deflate, ' +
    'sync flush, the trailing 4 bytes dropped): alone, each message in a fresh context (no context takeover, or a first message); ' +
    'stream, every message through one compressor in turn (context takeover, ws\'s default); percentages of the raw bytes. ' +
    `repeated: the test's one message (--repeat), its ${REPEATS}rd copy in a row with context takeover; ratios against ${baseline}`]
})
