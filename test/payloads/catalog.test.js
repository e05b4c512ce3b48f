import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { runScript } from '../helpers.js'

test('tests resolve by number and by name, case-insensitively', () => {
  assert.equal(resolveTest(3).name, 'medium')
  assert.equal(resolveTest('5').name, 'small')
  assert.equal(resolveTest('LARGE').id, 4)
  assert.throws(() => resolveTest('huge'), /unknown test 'huge': expected one of 1 numbers, 2 strings, 3 medium, 4 large, 5 small, people, person, counters/)
})

test('payload sizes are those of the classic five tests', () => {
  const jsonBytes = Object.fromEntries(TESTS.map((info) => [info.name, Buffer.byteLength(JSON.stringify(loadPayload(info)))]))
  assert.ok(jsonBytes.numbers > 150 && jsonBytes.numbers < 350, `numbers ${jsonBytes.numbers}`)
  assert.ok(jsonBytes.strings > 120 && jsonBytes.strings < 250, `strings ${jsonBytes.strings}`)
  assert.ok(jsonBytes.medium > 600 && jsonBytes.medium < 1200, `medium ${jsonBytes.medium}`)
  assert.ok(jsonBytes.large > 2500 && jsonBytes.large < 3500, `large ${jsonBytes.large}`)
  assert.equal(jsonBytes.small, 22)
  assert.ok(jsonBytes.people > 12_000_000 && jsonBytes.people < 14_000_000, `people ${jsonBytes.people}`)
  assert.equal(loadPayload(resolveTest('people')).person.length, 50_000)
  assert.equal(loadPayload(resolveTest('counters')).counter.length, 100)
})

test('the generator is deterministic: it rewrites the committed files byte for byte', async () => {
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'payloads-'))
  const { code } = await runScript('data/generate.js', [outDir])
  assert.equal(code, 0)
  for (const info of TESTS.filter((t) => t.dataFile)) {
    assert.equal(fs.readFileSync(path.join(outDir, info.dataFile), 'utf8'),
      fs.readFileSync(new URL(`../../data/${info.dataFile}`, import.meta.url), 'utf8'), info.dataFile)
  }
  fs.rmSync(outDir, { recursive: true })
})
