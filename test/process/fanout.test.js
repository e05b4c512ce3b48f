// Process-level: the fan-out client (client_json.js, client_protobuf.js) as a child process
// against node server.js in another; its reports, split runs merged by bin/merge.js, and bad input;
// and one against a server in this process, through a relay that can stall connections.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startServerProcess, runScript, startRelay } from '../helpers.js'
import { startServer } from '../../lib/server/server.js'

describe('fan-out clients against node server.js', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('client_json.js --direction fanout --decode one: the human report accounts for every delivery, and says who decoded; exit 0', async () => {
    const { code, stdout, stderr } = await runScript('client_json.js', ['3', '--direction', 'fanout', '--connections', '50',
      '--rate', '50', '--duration', '1s', '--warmup', '5', '--decode', 'one', '--url', server.url])
    assert.equal(code, 0, stderr)
    assert.match(stdout, /^json · test 3 medium · fanout · 50 subscriber\(s\), one publisher · network: none/)
    assert.match(stdout, /\nfanout {4}50 subscribers {2}published 50 {2}expected 2,500 {2}delivered 2,500 {2}lost 0 {2}duplicates 0 {2}reordered 0\n/)
    assert.match(stdout, /\nlatency {3}publish to delivery: min /)
    assert.match(stdout, /\nspread {4}p50 /)
    assert.match(stdout, /\ndecoded {3}by 1 of the 50 subscribers \(--decode one\); the others read the header only\n/)
    assert.match(stdout, /\+ 24 B fan-out header/)
  })

  test('--role publisher and --role subscriber in three processes, merged by bin/merge.js: the same accounting', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fanout-'))
    t.after(() => fs.rmSync(dir, { recursive: true }))
    const common = ['4', '--direction', 'fanout', '--rate', '40', '--duration', '1s', '--url', server.url, '--start-at', String(Date.now() + 2500)]
    const parts = ['subscriber', 'subscriber', 'publisher'].map((role, i) =>
      runScript('client_protobuf.js', [...common, '--role', role, '--connections', String(10 * (i + 1)), '--out', path.join(dir, `${i}.json`),
        ...(i === 0 ? ['--decode', 'one'] : [])]))
    for (const { code, stderr } of await Promise.all(parts)) assert.equal(code, 0, stderr)
    const { code, stdout, stderr } = await runScript('bin/merge.js', [0, 1, 2].map((i) => path.join(dir, `${i}.json`)).concat('--json'))
    assert.equal(code, 0, stderr)
    const merged = JSON.parse(stdout)
    const f = merged.fanout
    assert.deepEqual([f.subscribers, f.published, f.expected, f.delivered, f.lost, f.duplicates], [30, 40, 1200, 1200, 0, 0])
    assert.equal(f.decoders, 1 + 20, 'one of the first part\'s 10 subscribers (--decode one), all 20 of the second\'s')
    assert.equal(merged.ok, true)
  })

  test('bad fan-out input: one line on stderr, exit 2, nothing connects', async () => {
    for (const [args, message] of [
      [['--rate', '0'], "--rate must be a number > 0, got '0'"],
      [[], '--direction fanout needs --rate (publishes per second) or --stages'],
      [['--rate', '5', '--inflight', '5'], '--inflight does not apply to fanout']
    ]) {
      const { code, stdout, stderr } = await runScript('client_json.js', ['3', '--direction', 'fanout', '--url', server.url, ...args])
      assert.equal(code, 2, stderr)
      assert.equal(stdout, '')
      assert.equal(stderr.trim().split('\n').length, 1, stderr)
      assert.ok(stderr.includes(message), stderr)
    }
  })
})

test('client_json.js --direction fanout --stages (up from 0 and down to 0, no --rate), 3 subscribers stalled on the way: liveness catches them (pinged, closed for the link, back with what they missed); exit 0', async (t) => {
  const server = await startServer({ port: 0, replay: 1000 })
  t.after(() => server.close())
  // Every connection goes through this relay: the 10 subscribers open first, the publisher last.
  const relay = await startRelay(server)
  t.after(() => relay.close())
  const running = runScript('client_json.js', ['3', '--direction', 'fanout', '--connections', '10', '--stages', '500ms:100,1500ms:0',
    '--warmup', '10', '--heartbeat', '200ms', '--timeout', '3000', '--url', relay.url, '--json'])
  // 10 warm-up publishes (at 100/s) and 30 measured in (the ramp at its top), the first 3 subscribers' bytes stop both ways, for good.
  while (server.stats.forTarget('json', 'medium').messages < 10 + 30) await new Promise((resolve) => setTimeout(resolve, 5))
  const stalled = relay.pairs.slice(0, 3)
  for (const [socket, upstream] of stalled) { socket.unpipe(); upstream.unpipe() }
  t.after(() => { for (const pair of stalled) for (const end of pair) end.destroy() })
  const { code, stdout, stderr } = await running
  assert.equal(code, 0, stderr)
  const f = JSON.parse(stdout).fanout
  assert.deepEqual([f.subscribers, f.published, f.expected, f.delivered, f.lost, f.duplicates], [10, 100, 1000, 1000, 0, 0], JSON.stringify(f))
  assert.ok(f.recovered > 0, 'what the stalled ones missed came replayed')
  assert.deepEqual(f.liveness.closes, { link: 3, server: 0, generator: 0 }, JSON.stringify(f.liveness))
  assert.ok(f.liveness.pings >= 3, JSON.stringify(f.liveness))
  assert.equal(f.reconnects.count, 3)
})
