import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { PROFILES, resolveNetwork } from '../../lib/network/profiles.js'

describe('resolveNetwork', () => {
  test('no shaping unless asked', () => {
    assert.equal(resolveNetwork({}), null)
    assert.equal(resolveNetwork({ profile: 'none' }), null)
  })
  test('profiles, custom values and overrides', () => {
    assert.equal(Object.keys(PROFILES).length, 12)
    assert.deepEqual(resolveNetwork({ profile: '3gslow' }), { profile: '3gslow', up: 400, down: 400, rtt: 200, loss: 0 })
    assert.deepEqual(resolveNetwork({ profile: '3g', rtt: 50 }), { profile: 'custom', up: 768, down: 1600, rtt: 50, loss: 0 })
    assert.deepEqual(resolveNetwork({ up: 400, down: 400, rtt: 100 }), { profile: 'custom', up: 400, down: 400, rtt: 100, loss: 0 })
  })
  test('bad values are one clear line', () => {
    assert.throws(() => resolveNetwork({ profile: '5g' }), /unknown --throttle '5g': expected none or one of 3g, /)
    assert.throws(() => resolveNetwork({ up: 0 }), /--up must be a positive number of kbit\/s, got '0'/)
    assert.throws(() => resolveNetwork({ loss: 101 }), /--loss must be a percentage from 0 to 100/)
  })
})
