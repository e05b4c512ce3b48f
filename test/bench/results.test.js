// The command a result file records must run as written: its arguments quoted where a shell would read them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { npmCommand } from '../../bench/support/results.js'

test('npmCommand gives a benchmark\'s arguments back as a shell reads them', () => {
  const args = ['--tests', '3,4', '--slo', 'p99<5ms,p50<1ms', "it's", '--url', 'ws://127.0.0.1:7070/a?b=1&c']
  const argv = process.argv
  let command
  try {
    process.argv = [argv[0], 'bench/capacity.js', ...args]
    command = npmCommand('bench:capacity')
  } finally {
    process.argv = argv
  }
  assert.equal(command.split(' -- ')[0], 'npm run bench:capacity')
  assert.match(command, / --tests 3,4 /, 'plain words stay as they are')
  // The shell hands back exactly the arguments given.
  const heard = execFileSync('sh', ['-c', `printf '%s\\n' ${command.split(' -- ')[1]}`], { encoding: 'utf8' })
  assert.deepEqual(heard.trimEnd().split('\n'), args)
})
