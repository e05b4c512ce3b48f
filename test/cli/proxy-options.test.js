import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { PROFILES } from '../../lib/network/profiles.js'
import { parseProxyArgs } from '../../lib/cli/proxy-options.js'

// Never pass --help here: yargs answers it with process.exit.
const proxy = (...args) => parseProxyArgs(['node', 'bin/shaping-proxy.js', ...args])

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

test('a port to listen on, a target and a profile', async () => {
  assert.deepEqual(await proxy('--listen', '7071', '--target', '127.0.0.1:7070', '--throttle', '3g'), {
    listenHost: '127.0.0.1',
    listenPort: 7071,
    targetHost: '127.0.0.1',
    targetPort: 7070,
    network: { profile: '3g', ...PROFILES['3g'], loss: 0 }
  })
})

test('host:port to listen on; a target port alone goes to 127.0.0.1', async () => {
  const options = await proxy('--listen', '0.0.0.0:7071', '--target', '7070', '--throttle', 'dsl')
  assert.equal(options.listenHost, '0.0.0.0')
  assert.equal(options.listenPort, 7071)
  assert.equal(options.targetHost, '127.0.0.1')
  assert.equal(options.targetPort, 7070)
})

test('--up, --down and --rtt make a custom network, alone or over a profile', async () => {
  assert.deepEqual((await proxy('--listen', '0', '--target', 'bench.example.com:443', '--rtt', '50')).network,
    { profile: 'custom', up: 10_000_000, down: 10_000_000, rtt: 50, loss: 0 })
  assert.deepEqual((await proxy('--listen', '0', '--target', '1', '--throttle', '3g', '--up', '100', '--down', '200')).network,
    { profile: 'custom', up: 100, down: 200, rtt: 150, loss: 0 })
})

test('shapes something or refuses to start', async () => {
  await assert.rejects(proxy('--listen', '7071', '--target', '7070'), usage('give a --throttle profile or --up/--down/--rtt'))
  await assert.rejects(proxy('--listen', '7071', '--target', '7070', '--throttle', 'none'), usage('give a --throttle profile or --up/--down/--rtt'))
})

test('--listen and --target are required and must be [host:]port', async () => {
  await assert.rejects(proxy('--listen', '7071', '--throttle', '3g'), usage('Missing required argument: target (see --help)'))
  await assert.rejects(proxy('--target', '7070', '--throttle', '3g'), usage('Missing required argument: listen (see --help)'))
  await assert.rejects(proxy('--listen', 'localhost', '--target', '7070', '--throttle', '3g'), usage("expected [host:]port, got 'localhost'"))
  await assert.rejects(proxy('--listen', '7071', '--target', 'h:x', '--throttle', '3g'), usage("expected [host:]port, got 'h:x'"))
})

test('a bad profile or value is refused', async () => {
  await assert.rejects(proxy('--listen', '7071', '--target', '7070', '--throttle', 'moon'),
    usage(`unknown --throttle 'moon': expected none or one of ${Object.keys(PROFILES).join(', ')}`))
  await assert.rejects(proxy('--listen', '7071', '--target', '7070', '--rtt', '-5'), usage("--rtt must be a number of ms >= 0, got '-5'"))
  await assert.rejects(proxy('--listen', '7071', '--target', '7070', '--loss', '1'), usage('Unknown argument: loss (see --help)'))
})
