// runClientCli's failures that come before anything connects, in-process. Successful runs, which
// connect to a server, are covered by test/process/client.test.js.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { runClientCli } from '../../lib/cli/client.js'

// Nothing listens on port 1: should a run get as far as connecting, it fails differently from
// what these tests expect instead of reaching some server. Never pass --help: yargs exits.
const CLOSED = 'ws://127.0.0.1:1'
const run = (format, ...args) => runClientCli(format, ['node', format ? `client_${format}.js` : 'client.js', ...args, '--url', CLOSED])

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

describe('runClientCli refuses before connecting', () => {
  let sigintListeners
  let savedToken
  before(() => {
    sigintListeners = process.listenerCount('SIGINT')
    savedToken = process.env.BENCH_TOKEN
    delete process.env.BENCH_TOKEN
  })
  after(() => {
    if (savedToken !== undefined) process.env.BENCH_TOKEN = savedToken
    // Refused runs never got as far as listening for SIGINT.
    assert.equal(process.listenerCount('SIGINT'), sigintListeners)
  })

  test('more workers than connections', async () => {
    await assert.rejects(run('json', '3', '100', '--workers', '3', '-c', '2'),
      usage('--workers 3 needs at least as many --connections (each worker has its own)'))
  })

  test('a threshold that does not parse, or a unit on a count', async () => {
    await assert.rejects(run('json', '3', '--assert', 'p99<<3'), usage(
      "--assert 'p99<<3': expected <metric><op><number>[unit] with metric p50|p90|p99|p999|max|mean|rate|sent|acked|errors|lost, " +
      'op < <= > >= == !=, e.g. "p99<20ms"'))
    await assert.rejects(run('json', '3', '--assert', 'errors==0ms'), usage("--assert 'errors==0ms': errors takes no unit"))
  })

  test('an unknown test', async () => {
    await assert.rejects(run('protobuf', '9', '10'),
      usage("unknown test '9': expected one of 1 numbers, 2 strings, 3 medium, 4 large, 5 small, people, person, counters"))
  })

  test('client.js without --format', async () => {
    await assert.rejects(run(null, '3'), usage('Missing required argument: format (see --help)'))
  })

  test('a payload file that cannot be read, or --proto without --type', async () => {
    await assert.rejects(run('json', '--payload', '/nonexistent/order.json'), usage('cannot read /nonexistent/order.json: ENOENT'))
    await assert.rejects(run('protobuf', '--payload', 'order.json', '--proto', 'shop.proto'), usage('--proto needs --type <message name>'))
  })

  test('a command-line mistake', async () => {
    await assert.rejects(run('json', '3', '--inflight', '0'), usage("--inflight must be a whole number >= 1, got '0'"))
  })
})
