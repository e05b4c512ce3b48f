// bench:out's plumbing, briefly (its figures live in docs/results/out.json, never in assertions about
// speed): each kind of --out runs against a real Prometheus, its pushes counted and none failed.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { DEBIAN_PROMETHEUS } from '../../bench/support/prometheus.js'
import { runScript } from '../helpers.js'

const unavailable = !fs.existsSync(DEBIAN_PROMETHEUS) && !process.env.CI && `no ${DEBIAN_PROMETHEUS} (apt-get install prometheus)`

test('bench:out: without --out, with prometheus-rw (and otlp where PROMETHEUS_OTLP is), every push delivered, the costs apart', { skip: unavailable, timeout: 120_000 }, async () => {
  const { code, stdout, stderr } = await runScript('bench/out.js', [], { env: { BENCH_ROUNDS: '1', BENCH_SECONDS: '1', BENCH_RATE: '2000' } })
  assert.equal(code, 0, stderr)
  const rows = stdout.split('\n').filter((line) => line.startsWith('| ')).slice(2).map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
  assert.deepEqual(rows.map(([kind]) => kind), ['none', 'prometheus-rw', ...(process.env.PROMETHEUS_OTLP ? ['otlp'] : [])])
  for (const [kind, streaming, cores, , versus, perMessageUs, pushes] of rows) {
    assert.ok(Number(cores) > 0 && Number(perMessageUs) > 0, kind)
    if (kind === 'none') continue
    assert.match(pushes, /^[1-9]\d* \(0\)$/, `${kind}: pushes (failed)`)
    // Every client counted what its pushes cost: a share of its CPU, above nothing.
    assert.match(streaming, /^\d+\.\d\d%$/, `${kind}: streaming's own CPU`)
    assert.ok(Number.parseFloat(streaming) > 0, `${kind}: streaming's own CPU`)
    assert.match(versus, /^-?\d+\.\d\d% \(one round\), inconclusive$/, `${kind}: vs none`)
  }
  assert.match(stdout, /streaming's own CPU: the report's outputsCpuUs/)
  assert.match(stdout, /OpenTelemetry's own Histogram instrument instead .* ns a value/)
})
