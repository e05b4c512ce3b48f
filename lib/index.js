// What the package offers to code that imports it (`import { createCodec } from 'ws-json-vs-protobuf'`):
// the codecs on the test payloads, the reports' merge, and the latency histograms they carry.
// The commands (server, clients, compare, pbjson, merge) are its bin entries.
export { addCodecModules, createCodec, formatNames } from './codecs/registry.js'
export { loadMessages, loadPayload, resolveTest, ALL_TESTS } from './payloads/catalog.js'
export { mergeReports } from './report/merge.js'
export { decodeHistogram, encodeHistogram, summarizeLatency } from './histogram.js'
