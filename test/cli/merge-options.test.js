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
    outputs: { file: undefined, streams: [], intervalMs: undefined, native: false, tags: {} },
    hdrOut: undefined,
    html: undefined,
    assert: []
  })
})

test('--json, --out, --hdr-out and repeated --assert are passed on', async () => {
  const options = await merge('a.json', '--json', '--out', 'merged.json', '--hdr-out', 'merged.hlog', '--assert', 'p99<20ms', '--assert', 'errors==0')
  const { outputs, ...rest } = options
  assert.deepEqual(rest, { files: ['a.json'], json: true, out: 'merged.json', hdrOut: 'merged.hlog', html: undefined, assert: ['p99<20ms', 'errors==0'] })
  assert.equal(outputs.file, 'merged.json')
})

test('--out streams and --tag: the run id left to the parts\' unless given', async () => {
  const { outputs } = await merge('a.json', '--out', 'prometheus-rw=http://p:9090/api/v1/write', '--tag', 'team=x')
  assert.deepEqual(outputs.streams.map(({ kind }) => kind), ['prometheus-rw'])
  assert.deepEqual(outputs.tags, { team: 'x' })
  await assert.rejects(merge('a.json', '--out', 'statsd=udp://x'), /no output kind 'statsd'/)
})

test('needs at least one file', async () => {
  await assert.rejects(merge(), usage('Not enough non-option arguments: got 0, need at least 1 (see --help)'))
  await assert.rejects(merge('--json'), usage('Not enough non-option arguments: got 0, need at least 1 (see --help)'))
})

test('unknown options are refused', async () => {
  await assert.rejects(merge('a.json', '--format', 'json'), usage('Unknown argument: format (see --help)'))
})
