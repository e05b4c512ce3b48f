// bench:broadcast for real: the bare ceiling and the fan-out mode in one run. The figures are the
// benchmark's business: this checks the plumbing and the accounting.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runScript } from '../helpers.js'

test('bench:broadcast: the bare ceiling, then the fan-out mode at 0.8 of it and less until it holds, every delivery accounted', { timeout: 90_000 }, async () => {
  const run = await runScript('bench/broadcast.js', ['--subscribers', '50', '--duration', '1s', '--json'])
  assert.ok(run.code === 0 || run.code === 1, run.stderr) // 1: the target missed at 0.8, which a busy test machine may do
  const { bare, fanout, target } = JSON.parse(run.stdout)
  assert.ok(bare.rate > 0 && bare.deliveries > 0, JSON.stringify(bare))
  assert.deepEqual(fanout.map((r) => r.load), [0.8, 0.4, 0.2, 0.1].slice(0, fanout.length))
  assert.ok(fanout.slice(0, -1).every((r) => !r.met), 'halved only while the target was missed')
  for (const { load, rate, report } of fanout) {
    assert.equal(rate, Math.round(load * bare.rate / 50 * 100) / 100, 'publishes/s: that share of the ceiling over the subscribers')
    const { published, expected, delivered, lost, subscribers } = report.fanout
    assert.equal(subscribers, 50)
    assert.equal(expected, published * 50)
    assert.equal(delivered + lost, expected)
  }
  assert.equal(target.met, fanout[0].met)
  assert.equal(target.met, run.code === 0)
  assert.equal(target.heldAt, fanout.find((r) => r.met)?.load ?? null)
})
