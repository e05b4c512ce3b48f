// npm run gen:fixtures (tools/gen-fixtures.js) as CI runs it: the committed fixtures are up to date,
// and --check on a stale copy fails with one line naming the files, changing nothing, until the
// script writes them again.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { ROOT, runScript } from '../helpers.js'

const SCRIPT = 'tools/gen-fixtures.js'

test('the committed fixtures are what npm run gen:fixtures writes (--check)', async () => {
  const check = await runScript(SCRIPT, ['--check'])
  assert.equal(check.code, 0, check.stderr)
  assert.match(check.stdout, /^up to date: \d+ files in /)
})

test('--check on a stale copy: exit 1, one line naming each stale file, nothing changed; writing mends it', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixtures-check-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.cpSync(path.join(ROOT, 'fixtures'), dir, { recursive: true })
  fs.writeFileSync(path.join(dir, 'schemas/medium.avro.json'), '{}\n')
  fs.rmSync(path.join(dir, 'streams/small.jsonl.gz'))

  const stale = await runScript(SCRIPT, ['--check', '--dir', dir])
  assert.equal(stale.code, 1)
  assert.equal(stale.stdout, '')
  assert.match(stale.stderr, /^out of date with lib\/payloads and the codecs: \S+\/schemas\/medium\.avro\.json, \S+\/streams\/small\.jsonl\.gz \(run npm run gen:fixtures\)\n$/)
  assert.equal(fs.readFileSync(path.join(dir, 'schemas/medium.avro.json'), 'utf8'), '{}\n', '--check changes nothing')

  const write = await runScript(SCRIPT, ['--dir', dir])
  assert.equal(write.code, 0, write.stderr)
  assert.match(write.stdout, /^updated \S+\/schemas\/medium\.avro\.json, \S+\/streams\/small\.jsonl\.gz\n$/)
  assert.equal((await runScript(SCRIPT, ['--check', '--dir', dir])).code, 0)
})

test('a bad option is one line and exit 2', async () => {
  const run = await runScript(SCRIPT, ['--chek'])
  assert.equal(run.code, 2)
  assert.match(run.stderr, /^Unknown option '--chek'.*\(Usage: npm run gen:fixtures/)
  assert.equal(run.stderr.split('\n').length, 2)
})
