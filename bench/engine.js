// npm run bench:engine — our server + client against a bare ws pair, in one run.
// For tests 5 and 3, both formats, 100 in flight: msgs/s of each and the ratio ours/bare.
// Then a 10,000-message corpus (--payload feed.jsonl) against one of its messages sent every time:
// replaying a corpus must cost no more than one payload (corpus/single at least 0.9).
// Rounds alternate so background noise hits both alike; the median is reported.
// BENCH_BEFORE=<git ref> (checked out beside this copy, as bench:startup and bench:verdicts do) or
// <dir> (a copy of the project at another commit, npm ci'd): each round also runs that copy's server
// and client (before and after take turns going first), and engine-before-after.json holds both
// ratios measured in one run.
// Then tests 5 and 3 again over wss://, both pairs on one throwaway certificate (engine-tls.json):
// the engine's cost beside the encryption both pay.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
import { throwawayCertificate } from '../lib/server/tls.js'
import { checkout } from './support/checkout.js'
import { printRow, startResults } from './support/results.js'
import { median } from './support/statistics.js'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 100000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
const INFLIGHT = 100
const CASES = [['5', 'json'], ['5', 'protobuf'], ['3', 'json'], ['3', 'protobuf']]
const checkedOut = process.env.BENCH_BEFORE && !fs.existsSync(process.env.BENCH_BEFORE) && checkout(process.env.BENCH_BEFORE)
const BEFORE = checkedOut ? checkedOut.dir : process.env.BENCH_BEFORE
process.on('exit', () => checkedOut?.remove())

/**
 * The bare pair's msgs/s; with `tls` ({cert, key} files) over wss://.
 */
async function bareRate (test, format, tls) {
  const server = await startServerProcess([], { script: 'bench/support/bare.js', args: ['server', test, format, ...(tls ? [tls.cert, tls.key] : [])] })
  try {
    const { stdout } = await runScript('bench/support/bare.js', ['client', server.url, test, format, String(MESSAGES), String(INFLIGHT), ...(tls ? [tls.cert] : [])])
    return JSON.parse(stdout).rate
  } finally {
    await server.stop()
  }
}

/** Our server and client, from this copy of the project or another (root); with `tls` over wss://. */
async function ourRate (test, format, root, tls) {
  const server = await startServerProcess(tls ? ['--tls-cert', tls.cert, '--tls-key', tls.key] : [], { root })
  try {
    // --repeat: the bare client sends the test's one message, so ours does too (like for like).
    const { stdout } = await runScript(`client_${format}.js`, [test, String(MESSAGES), '--inflight', String(INFLIGHT), '--repeat', '--url', server.url,
      ...(tls ? ['--ca', tls.cert] : []), '--json'], { root })
    return JSON.parse(stdout).rate
  } finally {
    await server.stop()
  }
}

/** A market-data feed of `count` messages in four kinds, and the one message closest to its mean size. */
function writeCorpus (dir, count) {
  const messages = Array.from({ length: count }, (_, i) => JSON.stringify([
    { type: 'ticker', symbol: 'BTC-USD', price: 43000 + i * 0.25, volume: i * 10, ts: 1_700_000_000_000 + i },
    { type: 'book', symbol: 'ETH-USD', bids: [[2300.5, 1.2], [2300.25, 0.4]], asks: [[2301, 2]], seq: i },
    { type: 'trade', symbol: 'BTC-USD', price: 43001.5, size: 0.01, side: i % 8 ? 'buy' : 'sell', id: `t${i}` },
    { type: 'heartbeat', ts: 1_700_000_000_000 + i }
  ][i % 4]))
  const mean = messages.reduce((sum, text) => sum + text.length, 0) / count
  const single = messages.reduce((best, text) => Math.abs(text.length - mean) < Math.abs(best.length - mean) ? text : best)
  const corpus = path.join(dir, 'feed.jsonl')
  fs.writeFileSync(corpus, messages.join('\n') + '\n')
  const one = path.join(dir, 'one.json')
  fs.writeFileSync(one, single)
  return { corpus, one }
}

async function payloadRate (file, format) {
  const server = await startServerProcess()
  try {
    const { stdout } = await runScript(`client_${format}.js`, ['--payload', file, String(MESSAGES), '--inflight', String(INFLIGHT), '--url', server.url, '--json'])
    return JSON.parse(stdout).rate
  } finally {
    await server.stop()
  }
}

const results = startResults('engine', 'npm run bench:engine')
const beforeAfterResults = BEFORE && startResults('engine-before-after', 'npm run bench:engine')
const columns = ['test', 'format', 'bare msgs/s', 'ours msgs/s', 'ours/bare']
const rows = []
const beforeAfter = []
console.log(`# bench:engine — ${MESSAGES} messages, ${INFLIGHT} in flight, median of ${ROUNDS} rounds`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log('|---|---|---:|---:|---:|')
for (const [test, format] of CASES) {
  const bare = []
  const ours = []
  const before = []
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await bareRate(test, format))
    // With a before copy, which of the two goes first alternates: whichever runs second was seen
    // to lose a few percent on this machine, whatever the code.
    if (BEFORE && round % 2 === 0) before.push(await ourRate(test, format, BEFORE))
    ours.push(await ourRate(test, format))
    if (BEFORE && round % 2 === 1) before.push(await ourRate(test, format, BEFORE))
  }
  const a = median(bare)
  const b = median(ours)
  const int = (value) => Math.round(value).toLocaleString('en-US')
  rows.push([test, format, int(a), int(b), (b / a).toFixed(2)])
  printRow(rows.at(-1))
  if (BEFORE) beforeAfter.push([test, format, int(a), int(median(before)), int(b), (median(before) / a).toFixed(2), (b / a).toFixed(2)])
}
results.write({
  columns,
  rows,
  notes: [`${MESSAGES.toLocaleString('en-US')} messages per run, ${INFLIGHT} in flight, 1 connection; bare (bench/support/bare.js) and ours alternate, median of ${ROUNDS} rounds each`]
})
if (BEFORE) {
  console.log(`\n# before (${BEFORE}) and after (this copy), same rounds`)
  for (const row of beforeAfter) printRow(row)
  beforeAfterResults.write({
    columns: ['test', 'format', 'bare msgs/s', 'before msgs/s', 'after msgs/s', 'before/bare', 'after/bare'],
    rows: beforeAfter,
    notes: [`before: the copy in BENCH_BEFORE (${path.basename(BEFORE)}); after: this one; each round runs bare, then before and after, which take turns going first; ` +
      `median of ${ROUNDS} rounds, ${MESSAGES.toLocaleString('en-US')} messages per run, ${INFLIGHT} in flight`]
  })
}

const tlsResults = startResults('engine-tls', 'npm run bench:engine')
const tlsRows = []
const tlsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-tls-'))
const certificate = await throwawayCertificate()
const tls = { cert: path.join(tlsDir, 'cert.pem'), key: path.join(tlsDir, 'key.pem') }
fs.writeFileSync(tls.cert, certificate.cert)
fs.writeFileSync(tls.key, certificate.key)
console.log('\n# over wss://, both pairs on one throwaway certificate (ECDSA P-256), same rounds')
printRow(columns)
console.log('|---|---|---:|---:|---:|')
for (const [test, format] of CASES) {
  const bare = []
  const ours = []
  for (let round = 0; round < ROUNDS; round++) {
    bare.push(await bareRate(test, format, tls))
    ours.push(await ourRate(test, format, undefined, tls))
  }
  const [a, b] = [median(bare), median(ours)]
  tlsRows.push([test, format, Math.round(a).toLocaleString('en-US'), Math.round(b).toLocaleString('en-US'), (b / a).toFixed(2)])
  printRow(tlsRows.at(-1))
}
fs.rmSync(tlsDir, { recursive: true, force: true })
tlsResults.write({
  columns,
  rows: tlsRows,
  notes: [`over wss:// (TLS 1.3, the client verifying a throwaway certificate), ${MESSAGES.toLocaleString('en-US')} messages per run, ${INFLIGHT} in flight, ` +
    `1 connection; bare (bench/support/bare.js over https) and ours alternate, median of ${ROUNDS} rounds each`]
})

const CORPUS_MESSAGES = 10_000
const corpusResults = startResults('engine-corpus', 'npm run bench:engine')
const corpusColumns = ['format', 'one message msgs/s', `${CORPUS_MESSAGES.toLocaleString('en-US')}-message corpus msgs/s`, 'corpus/one']
const corpusRows = []
const files = writeCorpus(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-corpus-')), CORPUS_MESSAGES)
console.log(`\n# replaying a ${CORPUS_MESSAGES.toLocaleString('en-US')}-message corpus against one of its messages, same run`)
printRow(corpusColumns)
console.log('|---|---:|---:|---:|')
for (const format of ['json', 'protobuf']) {
  const one = []
  const corpus = []
  for (let round = 0; round < ROUNDS; round++) {
    one.push(await payloadRate(files.one, format))
    corpus.push(await payloadRate(files.corpus, format))
  }
  const a = median(one)
  const b = median(corpus)
  corpusRows.push([format, Math.round(a).toLocaleString('en-US'), Math.round(b).toLocaleString('en-US'), (b / a).toFixed(2)])
  printRow(corpusRows.at(-1))
}
corpusResults.write({
  columns: corpusColumns,
  rows: corpusRows,
  notes: [`${MESSAGES.toLocaleString('en-US')} messages per run, ${INFLIGHT} in flight; the one message is the corpus message closest to its mean size; ` +
    `a feed of tickers, book updates, trades and heartbeats; median of ${ROUNDS} rounds each, alternating`]
})
