import { test } from 'node:test'
import assert from 'node:assert/strict'
import { UsageError } from '../../lib/errors.js'
import { parseMergeArgs } from '../../lib/cli/merge-options.js'

// Never pass --help here: yargs answers it with process.exit.
const merge = (...args) => parseMergeArgs(['node', 'bin/merge.js', ...args])

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

test('report files in order, human report by default, no files written, no thresholds', async () => {
  assert.deepEqual(await merge('host-a.json', 'host-b.json', 'host-c.json'), {
    files: ['host-a.json', 'host-b.json', 'host-c.json'],
    json: false,
    out: undefined,
    hdrOut: undefined,
    html: undefined,
    assert: []
  })
})

test('--json, --out, --hdr-out and repeated --assert are passed on', async () => {
  const options = await merge('a.json', '--json', '--out', 'merged.json', '--hdr-out', 'merged.hlog', '--assert', 'p99<20ms', '--assert', 'errors==0')
  assert.deepEqual(options, { files: ['a.json'], json: true, out: 'merged.json', hdrOut: 'merged.hlog', html: undefined, assert: ['p99<20ms', 'errors==0'] })
})

test('needs at least one file', async () => {
  await assert.rejects(merge(), usage('Not enough non-option arguments: got 0, need at least 1 (see --help)'))
  await assert.rejects(merge('--json'), usage('Not enough non-option arguments: got 0, need at least 1 (see --help)'))
})

test('unknown options are refused', async () => {
  await assert.rejects(merge('a.json', '--format', 'json'), usage('Unknown argument: format (see --help)'))
})
