import { test } from 'node:test'
import assert from 'node:assert/strict'
import { CONNECT_STEPS, ConnectTimes } from '../../lib/load/connect-times.js'
import { decodeHistogram } from '../../lib/histogram.js'

test('ConnectTimes: each step of each opening in µs, their total, and failed attempts by cause', () => {
  const times = new ConnectTimes()
  assert.deepEqual(times.result(), { histograms: { tcp: null, tls: null, upgrade: null, total: null }, failures: {} }, 'nothing opened yet')
  times.record({ tcpUs: 100, tlsUs: null, upgradeUs: 300 })
  times.record({ tcpUs: 200, tlsUs: 1500, upgradeUs: 400 })
  times.record({ tcpUs: 0, tlsUs: null, upgradeUs: 250 }) // under a µs: counted as 1
  times.fail('refused')
  times.fail('refused')
  times.fail('status 503')
  const { histograms, failures } = times.result()
  assert.deepEqual(Object.keys(histograms), CONNECT_STEPS)
  const decoded = Object.fromEntries(Object.entries(histograms).map(([step, text]) => [step, decodeHistogram(text)]))
  assert.deepEqual([decoded.tcp.totalCount, decoded.tls.totalCount, decoded.upgrade.totalCount, decoded.total.totalCount], [3, 1, 3, 3])
  assert.deepEqual([decoded.tcp.minNonZeroValue, decoded.tcp.maxValue, decoded.tls.maxValue], [1, 200, 1500])
  assert.ok(Math.abs(decoded.total.maxValue - 2100) <= 2, 'tcp + tls + upgrade of the slowest (to the histogram\'s precision)')
  assert.deepEqual(failures, { refused: 2, 'status 503': 1 })
})
