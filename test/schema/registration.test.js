import { test } from 'node:test'
import assert from 'node:assert/strict'
import path from 'node:path'
import { compileRegistration } from '../../lib/schema/registration.js'
import { loadCustomTest, registrationFrame } from '../../lib/payloads/custom.js'

const fixture = (name) => path.join(import.meta.dirname, '../fixtures/infer', name)

test('compileRegistration: compiles once per schema text, bounded by size', async () => {
  const custom = await loadCustomTest({ payload: fixture('geojson.json') })
  const cache = new Map()
  const frame = Buffer.from(registrationFrame(custom))
  const type = compileRegistration(frame, 1024 * 1024, cache)
  assert.equal(type.fullName, '.pbjson.Payload')
  assert.equal(compileRegistration(frame, 1024 * 1024, cache), type, 'cached')
  assert.equal(cache.size, 1)
  assert.throws(() => compileRegistration(frame, 100, cache), /more than the 100 allowed/)
})
