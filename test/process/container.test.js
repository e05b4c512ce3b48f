// Process-level: npm run test:container's refusals. The build and run themselves are CI's
// (.ci/run runs npm run test:container after the tests: about 30 s warm, a few minutes cold).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runWithoutPrograms } from '../helpers.js'

test('without podman: one line saying what to install, exit 2, nothing left in the temporary directory', async () => {
  const { code, stdout, stderr, leftInTmp } = await runWithoutPrograms('tools/test-container.js')
  assert.equal(code, 2, stderr)
  assert.equal(stdout, '')
  assert.match(stderr, /^podman not found: apt-get install podman runc/)
  assert.equal(stderr.trim().split('\n').length, 1)
  assert.deepEqual(leftInTmp, [], 'its work directory is removed')
})
