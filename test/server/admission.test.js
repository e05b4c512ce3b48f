import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { openFileLimit, parseConnectionTarget } from '../../lib/server/admission.js'
import { CUSTOM_FORMATS, FORMATS } from '../../lib/codecs/registry.js'
import { resolveTest } from '../../lib/payloads/catalog.js'
import { PROJECT_ROOT, watchOutput } from '../../lib/processes.js'

describe('parseConnectionTarget', () => {
  test('accepts tests by number and by name', () => {
    assert.equal(parseConnectionTarget('/?test=3&format=protobuf').test.name, resolveTest(3).name)
    assert.equal(parseConnectionTarget('/?test=small&format=json').format, 'json')
  })
  test('names what is missing or unknown', () => {
    assert.throws(() => parseConnectionTarget('/?format=json'), /missing \?test=/)
    assert.throws(() => parseConnectionTarget('/?test=3'), /missing &format=/)
    assert.throws(() => parseConnectionTarget('/?test=3&format=xml'), /unknown format 'xml'/)
    assert.throws(() => parseConnectionTarget('/?test=nope&format=json'), /unknown test 'nope'/)
    assert.throws(() => parseConnectionTarget('/?test=custom&format=avro'), /format 'avro' does not support custom payloads/)
  })
  test('knows every format, and custom payloads in those that decode without the payload', () => {
    for (const format of FORMATS) assert.equal(parseConnectionTarget(`/?test=5&format=${format}`).format, format)
    for (const format of CUSTOM_FORMATS) assert.equal(parseConnectionTarget(`/?test=custom&format=${format}`).test.custom, true)
  })
})

test('openFileLimit: the open-file limit of this process, or of a child started with a lower one; Infinity where unknown', async () => {
  const own = openFileLimit()
  assert.ok(Number.isInteger(own) && own > 0, `${own}`)
  const child = spawn('bash', ['-c', 'ulimit -n 321 && exec "$0" -e "$1"', process.execPath,
    `import(${JSON.stringify(path.join(PROJECT_ROOT, 'lib/server/admission.js'))}).then((m) => console.log(m.openFileLimit()))`],
  { stdio: ['ignore', 'pipe', 'pipe'] })
  const { code, stdout } = await watchOutput(child).exited
  assert.equal(code, 0)
  assert.equal(stdout, '321\n')
  assert.equal(openFileLimit(path.join(PROJECT_ROOT, 'no-such-limits-file')), Infinity)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-'))
  try {
    const unlimited = path.join(dir, 'limits')
    fs.writeFileSync(unlimited, 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            unlimited            unlimited            files     \n')
    assert.equal(openFileLimit(unlimited), Infinity)
  } finally {
    fs.rmSync(dir, { recursive: true })
  }
})
