// `npm run compare -- --calibrate`'s command line. A file of its own: --calibrate registers the
// planted codec module, and the codec registry is one per process, so every later parse in the same
// process would see it among the codec modules (test/cli/compare-options.test.js expects none).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { parseCompareArgs } from '../../lib/cli/compare-options.js'
import { CALIBRATION_TESTS, DEFAULT_PLANTED_US, PLANTED_FORMAT, PLANTED_MODULE } from '../../lib/compare/calibration.js'

const compare = (...args) => parseCompareArgs(['node', 'bin/compare.js', ...args])

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

const REFUSED = '--calibrate compares JSON with itself plus a planted cost: it takes no --formats or --payload'

test('--calibrate alone: json against json-planted, 20 µs planted in the client, the calibration tests, the planted module handed on', async () => {
  const options = await compare('--calibrate')
  assert.equal(DEFAULT_PLANTED_US, 20)
  assert.deepEqual(CALIBRATION_TESTS, ['medium', 'large'])
  assert.deepEqual(options.calibrate, { side: 'client', us: DEFAULT_PLANTED_US })
  assert.deepEqual(options.formats, ['json', PLANTED_FORMAT])
  assert.equal(PLANTED_FORMAT, 'json-planted')
  assert.deepEqual(options.tests, CALIBRATION_TESTS)
  assert.deepEqual(options.codecModules, [PLANTED_MODULE], 'servers and clients load the planted codec')
  assert.match(PLANTED_MODULE, /\/lib\/compare\/planted-codec\.js$/)
  assert.equal(options.custom, null)
})

test('--calibrate µs, with --tests, --trials and the other options as usual; a flag right after it leaves the default cost', async () => {
  const options = await compare('--calibrate', '200', '--tests', '5,person', '--trials', '3', '-n', '40')
  assert.deepEqual([options.calibrate, options.tests, options.trials, options.messages], [{ side: 'client', us: 200 }, ['5', 'person'], 3, 40])
  assert.deepEqual((await compare('--calibrate', '2.5')).calibrate, { side: 'client', us: 2.5 }, 'a fraction of a µs is a cost too')
  assert.deepEqual((await compare('--calibrate=7')).calibrate, { side: 'client', us: 7 })
  const next = await compare('--calibrate', '--trials', '2')
  assert.deepEqual([next.calibrate, next.trials], [{ side: 'client', us: DEFAULT_PLANTED_US }, 2])
  assert.deepEqual((await compare('--calibrate', '--tests', 'small')).tests, ['small'], '--tests given replaces the calibration tests')
})

test('--calibrate server, server:µs, client:µs: the side planted in, each part defaulting; the same formats, tests and module', async () => {
  const server = await compare('--calibrate', 'server')
  assert.deepEqual(server.calibrate, { side: 'server', us: DEFAULT_PLANTED_US })
  assert.deepEqual([server.formats, server.tests, server.codecModules], [['json', PLANTED_FORMAT], CALIBRATION_TESTS, [PLANTED_MODULE]])
  assert.deepEqual((await compare('--calibrate', 'server:30')).calibrate, { side: 'server', us: 30 })
  assert.deepEqual((await compare('--calibrate=server:2.5', '--tests', 'small')).calibrate, { side: 'server', us: 2.5 })
  assert.deepEqual((await compare('--calibrate', 'client:5')).calibrate, { side: 'client', us: 5 })
  assert.deepEqual((await compare('--calibrate', 'client')).calibrate, { side: 'client', us: DEFAULT_PLANTED_US })
})

test('--calibrate refuses a cost that is not a positive number, an unknown side, --formats (even the same ones), --payload and another direction, with one line', async () => {
  for (const value of ['0', '-5', 'abc', 'Infinity', 'server:0', 'server:x', 'servers', 'browser:20', '20:server']) {
    await assert.rejects(compare('--calibrate', value), usage(`--calibrate takes client or server, µs above 0, or both as server:30; got '${value}'`))
  }
  for (const direction of ['down', 'echo']) {
    await assert.rejects(compare('--calibrate', 'server', '--direction', direction),
      usage("--calibrate plants its cost in the client's encode or the server's decode of messages going up: it runs with --direction up"))
  }
  await assert.rejects(compare('--calibrate', '--formats', 'json,json'), usage(REFUSED))
  await assert.rejects(compare('--calibrate', '--formats', `json,${PLANTED_FORMAT}`), usage(REFUSED))
  await assert.rejects(compare('--formats=json,protobuf', '--calibrate', '10'), usage(REFUSED))
  await assert.rejects(compare('--calibrate', '--payload', 'order.json'), usage(REFUSED))
  await assert.rejects(compare('--calibrate', '10', '--calibrate', '20'), usage('--calibrate given more than once (10, 20); give it once'))
  await assert.rejects(compare('--calibrate', '--tests', '9'), /^UsageError: unknown test '9'/)
})
