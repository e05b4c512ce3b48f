// npm run bench:size — bytes per message for every test: JSON (UTF-8) and protobuf, raw, with
// permessage-deflate as ws compresses a message (raw deflate, sync flush, trailing 4 bytes dropped;
// a fresh context, i.e. the first message or no context takeover) and with gzip.
import zlib from 'node:zlib'
import { createCodec } from '../lib/codecs.js'
import { TESTS, loadPayload, testLabel } from '../lib/payloads.js'

const permessageDeflate = (bytes) => zlib.deflateRawSync(bytes, { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length - 4
const gzip = (bytes) => zlib.gzipSync(bytes).length
const ratio = (a, b) => (a / b).toFixed(2)

console.log('| test | JSON B | protobuf B | pb/JSON | JSON deflate | pb deflate | pb/JSON | JSON gzip | pb gzip | pb/JSON |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const test of TESTS) {
  const [json, pb] = ['json', 'protobuf'].map((format) => {
    const codec = createCodec(format, test)
    return Buffer.from(codec.encode(codec.prepare(loadPayload(test))))
  })
  const [jd, pd, jg, pg] = [permessageDeflate(json), permessageDeflate(pb), gzip(json), gzip(pb)]
  console.log(`| ${testLabel(test)} | ${json.length} | ${pb.length} | ${ratio(pb.length, json.length)} | ${jd} | ${pd} | ${ratio(pd, jd)} | ${jg} | ${pg} | ${ratio(pg, jg)} |`)
}
