import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { parsePbjsonArgs } from '../../lib/cli/pbjson-options.js'

// Never pass --help here: yargs answers it with process.exit.
const pbjson = (...args) => parsePbjsonArgs(['node', 'pbjson', ...args])

test('infer: the JSON, type and package with their defaults, and --sample as a whole number', async () => {
  assert.deepEqual(await pbjson('infer', 'feed.jsonl'), { command: 'infer', json: 'feed.jsonl', type: 'Payload', package: 'pbjson', sample: undefined })
  assert.deepEqual(await pbjson('infer', 'feed.jsonl', '--sample', '1000', '--type', 'Event', '--package', 'shop'),
    { command: 'infer', json: 'feed.jsonl', type: 'Event', package: 'shop', sample: 1000 })
  await assert.rejects(pbjson('infer', 'feed.jsonl', '--sample', 'lots'), (err) => err instanceof UsageError && /^--sample must be a whole number >= 1, got 'lots'$/.test(err.message))
})

test('check: --proto required, five examples unless told, --examples 0 allowed', async () => {
  assert.deepEqual(await pbjson('check', 'order.json', '--proto', 'shop.proto'),
    { command: 'check', json: 'order.json', type: 'Payload', proto: 'shop.proto', examples: 5, format: undefined, codecModules: [] })
  assert.equal((await pbjson('check', 'order.json', '--proto', 'shop.proto', '--examples', '0')).examples, 0)
  await assert.rejects(pbjson('check', 'order.json'), (err) => err instanceof UsageError && /proto/.test(err.message))
})

test('check --format: a format by name, one a --codec-module adds, or a one-line refusal', async () => {
  assert.equal((await pbjson('check', 'order.json', '--proto', 'shop.proto', '--format', 'json-validated')).format, 'json-validated')
  const added = await pbjson('check', 'order.json', '--proto', 'shop.proto', '--format', 'json-envelope', '--codec-module', 'test/fixtures/codecs/json-envelope.js')
  assert.equal(added.codecModules.length, 1)
  await assert.rejects(pbjson('check', 'order.json', '--proto', 'shop.proto', '--format', 'xml'), (err) => err instanceof UsageError && /^unknown format 'xml'/.test(err.message))
})
