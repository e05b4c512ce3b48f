import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { PROFILES, resolveNetwork, tcUnavailableReason } from '../lib/throttle.js'
import { startServerProcess, runScript } from './helpers.js'

describe('resolveNetwork', () => {
  test('no shaping unless asked', () => {
    assert.equal(resolveNetwork({}), null)
    assert.equal(resolveNetwork({ throttle: 'none' }), null)
  })
  test('profiles, custom values and overrides', () => {
    assert.equal(Object.keys(PROFILES).length, 12)
    assert.deepEqual(resolveNetwork({ throttle: '3gslow' }), { profile: '3gslow', up: 400, down: 400, rtt: 200, loss: 0 })
    assert.deepEqual(resolveNetwork({ throttle: '3g', rtt: 50 }), { profile: 'custom', up: 768, down: 1600, rtt: 50, loss: 0 })
    assert.deepEqual(resolveNetwork({ up: 400, down: 400, rtt: 100 }), { profile: 'custom', up: 400, down: 400, rtt: 100, loss: 0 })
  })
  test('bad values are one clear line', () => {
    assert.throws(() => resolveNetwork({ throttle: '5g' }), /unknown --throttle '5g': expected none or one of 3g, /)
    assert.throws(() => resolveNetwork({ up: 0 }), /--up must be a positive number of kbit\/s, got '0'/)
    assert.throws(() => resolveNetwork({ loss: 101 }), /--loss must be a percentage from 0 to 100/)
  })
})

describe('clients through the userspace shaping proxy', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  test('rtt 100 ms, strict request/response on test 5: p50 in [100, 110] ms', async () => {
    const { code, stdout, stderr } = await runScript('client_protobuf.js', ['5', '25', '--url', server.url, '--rtt', '100', '--throttle-backend', 'proxy', '--json'])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.deepEqual(report.messages, { sent: 25, acked: 25, errors: 0, lost: 0 })
    assert.ok(report.latencyMs.p50 >= 100 && report.latencyMs.p50 <= 110, `p50 ${report.latencyMs.p50}`)
    assert.equal(report.network.backend, 'proxy')
    assert.equal(report.network.rtt, 100)
  })

  test('400 kbit/s each way, test 4 JSON: p50 within 10% of rtt + frame serialisation + ACK transit', async () => {
    const { code, stdout, stderr } = await runScript('client_json.js', ['4', '15', '--url', server.url, '--rtt', '80', '--up', '400', '--down', '400', '--json'])
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    const frameBytes = report.bytes.written / report.messages.sent
    const expectedMs = 80 + frameBytes * 8 / 400 + 5 * 8 / 400
    assert.ok(Math.abs(report.latencyMs.p50 - expectedMs) <= expectedMs * 0.1, `p50 ${report.latencyMs.p50} vs ${expectedMs}`)
    assert.equal(report.network.profile, 'custom')
    assert.match(report.network.reason, /proxy/)
  })

  test('--loss is refused on the proxy backend with the reason', async () => {
    const { code, stderr } = await runScript('client_json.js', ['5', '5', '--url', server.url, '--throttle', '3g', '--loss', '1', '--throttle-backend', 'proxy'])
    assert.equal(code, 2)
    assert.match(stderr, /^--loss needs kernel shaping \(--throttle-backend tc\): TCP through a userspace proxy hides loss\n$/)
  })

  test('--throttle-backend tc where it cannot work: one line naming what is missing, nothing applied', async (t) => {
    const missing = await tcUnavailableReason()
    if (!missing) return t.skip('kernel shaping works on this machine')
    const { code, stderr } = await runScript('client_json.js', ['5', '5', '--url', server.url, '--throttle', '3g', '--throttle-backend', 'tc'])
    assert.equal(code, 2)
    assert.equal(stderr, `--throttle-backend tc cannot work here: ${missing}; use --throttle-backend proxy\n`)
  })
})
