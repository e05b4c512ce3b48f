import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runScript } from './helpers.js'

test('npm run compare: both formats per test and profile, side by side, exact accounting', async () => {
  const { code, stdout, stderr } = await runScript('bin/compare.js', ['--tests', '5,person', '--throttle', 'none,custom-free', '-n', '20', '-w', '0', '--json'])
  assert.equal(code, 2, 'an unknown profile is refused before anything runs')
  assert.match(stderr, /^unknown --throttle 'custom-free'/)
  assert.equal(stdout, '')

  const run = await runScript('bin/compare.js', ['--tests', '5,person', '--throttle', 'none,fois', '-n', '20', '-w', '0', '--compress', '--json'])
  assert.equal(run.code, 0, run.stderr)
  const reports = JSON.parse(run.stdout)
  assert.deepEqual(reports.map((r) => `${r.test}/${r.network.profile}/${r.format}`), [
    'small/none/json', 'small/none/protobuf', 'small/fois/json', 'small/fois/protobuf',
    'person/none/json', 'person/none/protobuf', 'person/fois/json', 'person/fois/protobuf'
  ])
  for (const report of reports) assert.deepEqual(report.messages, { sent: 20, acked: 20, errors: 0, lost: 0 })

  const human = await runScript('bin/compare.js', ['--tests', '5', '-n', '20', '-w', '0'])
  assert.equal(human.code, 0, human.stderr)
  assert.match(human.stdout, /protobuf\/json/)
  assert.match(human.stdout, /payload bytes\/msg\s+22\s+6\s+0\.27x/)
})
