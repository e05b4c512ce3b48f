// Process-level: npm run bench:kubernetes's refusals. The run itself (a one-node cluster, ~4 min
// once its binaries are built) is not part of the tests: docs/results/kubernetes.json records one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runScript, runWithoutPrograms } from '../helpers.js'

test('without the cluster\'s tools: one line naming the packages to install, exit 2, nothing made', async () => {
  const { code, stdout, stderr, leftInTmp } = await runWithoutPrograms('bench/kubernetes.js')
  assert.equal(code, 2, stderr)
  assert.equal(stdout, '')
  assert.match(stderr, process.getuid() === 0
    ? /^bench:kubernetes cannot run here: missing etcd, containerd, .*: apt-get install etcd-server containerd .*podman/
    : /^bench:kubernetes cannot run here: a one-node cluster needs root/)
  assert.equal(stderr.trim().split('\n').length, 1)
  assert.deepEqual(leftInTmp, [], 'nothing made')
})

test('an unknown option: one line, exit 2', async () => {
  const { code, stderr } = await runScript('bench/kubernetes.js', ['--nodes', '3'])
  assert.equal(code, 2, stderr)
  assert.match(stderr, /^Unknown argument: nodes/)
  assert.equal(stderr.trim().split('\n').length, 1)
})
