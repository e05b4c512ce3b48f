import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { outdatedMethods, provenanceOf, sourceCommit } from '../lib/provenance.js'
import { PROJECT_ROOT } from '../lib/processes.js'

const METHOD = { name: 'compare', version: 3, since: '2026-11-25T17:08:00.000Z' }

test('outdatedMethods: a recorded version older than the method\'s is outdated; the same or none recorded after it took effect is not', () => {
  assert.deepEqual(outdatedMethods({ methods: { compare: 2 } }, [METHOD]), [{ ...METHOD, recorded: 2 }])
  assert.deepEqual(outdatedMethods({ methods: { compare: 3 }, startedAt: '2020-01-01T00:00:00.000Z' }, [METHOD]), [], 'the version decides when recorded')
  assert.deepEqual(outdatedMethods({ startedAt: '2026-11-25T17:07:59.999Z' }, [METHOD]), [{ ...METHOD, recorded: null }])
  assert.deepEqual(outdatedMethods({ startedAt: '2026-11-25T17:08:00.000Z' }, [METHOD]), [])
  assert.deepEqual(outdatedMethods({}, [METHOD]), [{ ...METHOD, recorded: null }], 'undated and unversioned: nothing says it is current')
  const bench = { name: 'bench:verdicts', version: 1, since: '' }
  assert.deepEqual(outdatedMethods({ methods: { 'bench:verdicts': 1, compare: 2 } }, [bench, METHOD]).map(({ name }) => name), ['compare'])
})

test('sourceCommit: this checkout\'s HEAD, marked when tracked files differ; null outside git', (t) => {
  const head = execFileSync('git', ['-C', PROJECT_ROOT, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' }).trim()
  assert.match(sourceCommit(), new RegExp(`^${head}(\\+changes)?$`))
  const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'provenance-'))
  t.after(() => fs.rmSync(elsewhere, { recursive: true, force: true }))
  assert.equal(sourceCommit(elsewhere), null)
  assert.deepEqual(provenanceOf([METHOD, { name: 'bench:x', version: 1, since: '' }]), { methods: { compare: 3, 'bench:x': 1 }, commit: sourceCommit() })
})
