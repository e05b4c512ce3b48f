// bench:browser for real, small: Debian's Chromium downloads people in both formats, one
// generation, permessage-deflate off and on, into a result file in a temporary directory (the
// published one stays as it is). The figures are the benchmark's business: this checks the
// plumbing, the result's shape and that one generation calls nothing. Bad input is one line and exit 2.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { browserUnavailable, runScript, temporaryDirectory } from '../helpers.js'

describe('bench:browser', () => {
  test('an unknown test, an unknown link or no Chromium is one line and exit 2', async () => {
    for (const [args, message] of [
      [['--tests', 'people,xml'], /^unknown test 'xml': expected one of .*people.*\n$/],
      [['--throttle', 'cable,moon'], /^--throttle: unknown profile 'moon': expected none or some of 3g, .*cable.*\n$/],
      [['--chromium', '/nonexistent/chromium'], /^no Chromium at \/nonexistent\/chromium: apt-get install chromium .*\n$/]
    ]) {
      const run = await runScript('bench/browser.js', args)
      assert.equal(run.code, 2, run.stderr)
      assert.match(run.stderr, message)
    }
  })

  test('people once per format, deflate off and on: a row per case, each format\'s figures, no call from one generation, the seed\'s verdicts',
    { skip: browserUnavailable(), timeout: 90_000 }, async () => {
      const dir = temporaryDirectory('bench-browser')
      const args = ['--tests', 'people', '--throttle', 'none', '--trials', '1']
      const run = await runScript('bench/browser.js', args, { env: { BENCH_RESULTS_DIR: dir } })
      assert.equal(run.code, 0, run.stderr)
      const result = JSON.parse(fs.readFileSync(path.join(dir, 'browser.json'), 'utf8'))
      assert.equal(result.name, 'browser')
      assert.equal(result.command, `npm run bench:browser -- ${args.join(' ')}`)
      assert.equal(result.machine.cpus > 0, true)
      assert.deepEqual(result.columns.slice(0, 4), ['test', 'network', 'permessage-deflate', 'trials × messages'])
      assert.deepEqual(result.rows.map((row) => row.slice(0, 4)), [['people', 'loopback', 'off', '1 × 1'], ['people', 'loopback', 'on', '1 × 1']])
      for (const row of result.rows) {
        // transfer, decode, total, renderer CPU and server encode: json's ms / protobuf's ms, each a time that passed.
        for (const cell of row.slice(4, 9)) {
          assert.match(cell, /^[\d.]+ \/ [\d.]+$/)
          for (const ms of cell.split(' / ')) assert.ok(Number(ms) > 0, `${cell}`)
        }
        // The total is the transfer and the decode together, format by format.
        const [transfer, decode, total] = row.slice(4, 7).map((cell) => cell.split(' / ').map(Number))
        total.forEach((ms, f) => assert.ok(Math.abs(ms - transfer[f] - decode[f]) <= 0.1 + ms * 0.002, `total ${ms} = ${transfer[f]} + ${decode[f]}`))
        for (const cell of row.slice(9)) assert.match(cell, /^[\d.]+x inconclusive$/, 'one generation: a ratio, no interval, no call')
      }
      assert.match(result.notes.join(' '), /Chromium \d+\.\d+\.\d+\.\d+ .*permessage-deflate is the WebSocket counterpart of the seed's gzip/)
      assert.match(result.notes.join(' '), /The page cannot see its own CPU/)
      assert.equal(result.figures['seed-uncompressed-verdict'], 'inconclusive')
      assert.equal(result.figures['seed-compressed-verdict'], 'inconclusive')
      assert.match(result.figures['seed-uncompressed'], /^the seed: protobuf 21% faster; here [\d.]+x inconclusive: inconclusive$/)
      assert.match(run.stdout, /^\| test \| network \| permessage-deflate \|/)
    })
})
