import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { METRICS, prometheusName } from '../../lib/outputs/metrics.js'
import { ROOT } from '../helpers.js'

test('Prometheus names: base units, counters ending in _total, k6\'s where the meaning is the same', () => {
  const names = METRICS.map(prometheusName)
  assert.ok(names.includes('k6_ws_msgs_sent_total'))
  assert.ok(names.includes('k6_data_sent_total'))
  assert.ok(names.includes('k6_ws_connecting_seconds'))
  assert.ok(names.includes('wsbench_client_latency_seconds'))
  assert.ok(names.includes('wsbench_client_cpu_seconds_total'))
  for (const metric of METRICS.filter((m) => m.type === 'counter')) assert.match(prometheusName(metric), /_total$/)
  assert.equal(new Set(names).size, names.length)
})

test('docs/cli.md lists every series --out streams, with its type, and no other', () => {
  const doc = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8')
  const rows = [...doc.matchAll(/^\| `((?:k6|wsbench_client)_\w+)` \| (\w+) \|/gm)].map(([, name, type]) => `${name} ${type}`)
  assert.deepEqual(rows.sort(), METRICS.map((metric) => `${prometheusName(metric)} ${metric.type}`).sort())
})
