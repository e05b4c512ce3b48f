import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { HELP_COMMANDS, printPrebuiltHelp } from '../../lib/cli/help.js'
import { yargsHelp } from '../../tools/gen-help.js'
import { runScript } from '../helpers.js'

const prebuilt = (command) => readFileSync(new URL(`../../lib/cli/help/${command}.txt`, import.meta.url), 'utf8')

test('every prebuilt help text is what the command\'s yargs parser prints now (npm run gen:help after changing options)', () => {
  for (const command of HELP_COMMANDS) assert.equal(prebuilt(command), yargsHelp(command), `${command}: run npm run gen:help`)
})

test('printPrebuiltHelp answers --help or -h alone, and leaves every other command line to yargs', () => {
  const write = process.stdout.write
  let written = ''
  process.stdout.write = (text) => { written += text; return true }
  try {
    assert.equal(printPrebuiltHelp('server', ['node', 'server.js', '-h'], {}), true)
    assert.equal(written, prebuilt('server'))
    written = ''
    for (const args of [[], ['--port', '0'], ['--help', '--port', '0'], ['help']]) {
      assert.equal(printPrebuiltHelp('server', ['node', 'server.js', ...args], {}), false, args.join(' '))
    }
    // Defaults yargs shows depend on these: its own help is the true one then.
    assert.equal(printPrebuiltHelp('server', ['node', 'server.js', '--help'], { PORT: '8080' }), false)
    assert.equal(printPrebuiltHelp('client_json', ['node', 'client_json.js', '--help'], { BENCH_TOKEN: 's3cret' }), false)
    assert.equal(written, '')
  } finally {
    process.stdout.write = write
  }
})

test('node client_json.js --help prints the prebuilt text; with PORT set, node server.js --help is yargs\' own', async () => {
  const client = await runScript('client_json.js', ['--help'])
  assert.equal(client.code, 0)
  assert.equal(client.stdout, prebuilt('client_json'))
  const server = await runScript('server.js', ['--help'], { env: { PORT: '8123' } })
  assert.equal(server.code, 0)
  assert.match(server.stdout, /default from PORT\s+\[default: "8123"\]|\[default: "?8123"?\]/)
})
