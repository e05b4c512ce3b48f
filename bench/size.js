// npm run bench:size — bytes per message for every test and format (BENCH_FORMATS, default JSON and
// protobuf), over the test's stream of varying messages (what runs send by default): raw, and with
// permessage-deflate two ways: each message deflated alone (no context takeover, or a first
// message) and the stream through one compressor (context takeover, ws's default). Beside them the
// one message repeated (--repeat) with context takeover: each copy refers back to the identical
// one before it, which no real stream allows. Ratios against the first format. BENCH_TESTS=5,people
// picks tests (every test by default).
import { TESTS } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { deflatedAlone, deflatedInTurn } from './support/deflate.js'
import { encodedMessages, selectedFormats, selectedTests } from './support/formats.js'
import { printRow, startResults } from './support/results.js'

const SELECTED = selectedTests(TESTS)
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
/** One format's sizes on one test: its stream deflated alone and in turn, and its one message repeated. */
async function sizes (format, test) {
  const { stream, repeated } = await encodedMessages(format, test)
  // In turn first: it waits on zlib's threads, one round trip a message, while the other formats' run.
  const inTurn = mean(await deflatedInTurn(stream))
  const repeatedDeflated = (await deflatedInTurn(Array(REPEATS).fill(repeated))).at(-1)
  const bytes = mean(stream.map((frame) => frame.length))
  return { messages: stream.length, bytes, alone: mean(stream.map(deflatedAlone)), inTurn, repeated: repeated.length, repeatedDeflated }
}

for (const test of SELECTED) {
  const measured = await Promise.all(FORMATS.map((format) => sizes(format, test)))
  const first = measured[0]
  measured.forEach(({ messages, bytes, alone, inTurn, repeated, repeatedDeflated }, i) => {
    rows.push([testLabel(test), FORMATS[i], messages, Math.round(bytes), (bytes / first.bytes).toFixed(2), Math.round(alone), percent(alone, bytes),
      Math.round(inTurn), percent(inTurn, bytes), (inTurn / first.inTurn).toFixed(2), repeated, repeatedDeflated, percent(repeatedDeflated, repeated)])
    printRow(rows.at(-1))
  })
}
results.write({
  columns,
  rows,
  notes: ['bytes: the mean over one cycle of the test\'s stream (people: its one message); deflate as ws compresses (raw deflate, ' +
    'sync flush, the trailing 4 bytes dropped): alone, each message in a fresh context (no context takeover, or a first message); ' +
    'stream, every message through one compressor in turn (context takeover, ws\'s default); percentages of the raw bytes. ' +
    `repeated: the test's one message (--repeat), its ${REPEATS}rd copy in a row with context takeover; ratios against ${baseline}`]
})
