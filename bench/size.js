// npm run bench:size — bytes per message for every test and format (BENCH_FORMATS, default JSON and
// protobuf): raw, with permessage-deflate as ws compresses a message (raw deflate, sync flush,
// trailing 4 bytes dropped; a fresh context, i.e. the first message or no context takeover) and
// with gzip; each against the first format.
import zlib from 'node:zlib'
import { TESTS } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { encodedPayload, selectedFormats } from './formats.js'
import { startResults } from './results.js'

const FORMATS = selectedFormats(['json', 'protobuf'])
const permessageDeflate = (bytes) => zlib.deflateRawSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length - 4
const gzip = (bytes) => zlib.gzipSync(bytes).length
const baseline = FORMATS[0]

const results = startResults('size', 'npm run bench:size')
const columns = ['test', 'format', 'bytes', `vs ${baseline}`, 'deflate', `vs ${baseline}`, 'gzip', `vs ${baseline}`]
const rows = []
console.log(`| ${columns.join(' | ')} |`)
console.log('|---|---|---:|---:|---:|---:|---:|---:|')
for (const test of TESTS) {
  let first
  for (const format of FORMATS) {
    const { frame } = await encodedPayload(format, test)
    const sizes = [frame.length, permessageDeflate(frame), gzip(frame)]
    first ??= sizes
    const cells = sizes.flatMap((size, i) => [size, (size / first[i]).toFixed(2)])
    rows.push([testLabel(test), format, ...cells])
    console.log(`| ${rows.at(-1).join(' | ')} |`)
  }
}
results.write({
  columns,
  rows,
  notes: ['deflate: one message as ws compresses it (raw deflate, sync flush, the trailing 4 bytes dropped, a fresh context); ' +
    `gzip: the message gzipped whole; each ratio against ${baseline}`]
})
