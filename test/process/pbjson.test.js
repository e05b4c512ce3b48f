// bin/pbjson.js as a child process: its output and its exit codes.
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, describe, it } from 'node:test'
import { inferSchema } from '../../lib/schema/infer.js'
import { parseJsonExact } from '../../lib/schema/json-exact.js'

const fixturePath = (name) => fileURLToPath(new URL(`../fixtures/infer/${name}`, import.meta.url))
const readFixture = (name) => readFileSync(fixturePath(name), 'utf8')
const FLOAT_OF_0_1 = Math.fround(0.1)
const scratch = mkdtempSync(join(tmpdir(), 'pbjson-cli-'))
after(() => rmSync(scratch, { recursive: true, force: true }))

describe('bin/pbjson.js', () => {
  const pbjson = (...args) => spawnSync(process.execPath, [fileURLToPath(new URL('../../bin/pbjson.js', import.meta.url)), ...args], { encoding: 'utf8' })
  const assertOneLineError = (result, pattern) => {
    assert.equal(result.status, 2, result.stderr)
    assert.match(result.stderr.trim(), pattern)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.equal(result.stdout, '')
  }

  it('infer prints the inferred .proto on stdout', () => {
    const result = pbjson('infer', fixturePath('geojson.json'), '--type', 'Collection', '--package', 'geo')
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, inferSchema(parseJsonExact(readFixture('geojson.json')), { typeName: 'Collection', packageName: 'geo' }).proto)
    assert.equal(result.stderr, '')
  })

  it('check says lossless and exits 0 for the inferred schema', () => {
    const proto = join(scratch, 'api.proto')
    writeFileSync(proto, pbjson('infer', fixturePath('api-response.json')).stdout)
    const result = pbjson('check', fixturePath('api-response.json'), '--proto', proto, '--type', 'Payload')
    assert.equal(result.status, 0, result.stderr)
    assert.equal(result.stdout, 'lossless\n')
  })

  it('check prints the count and the first differences and exits 1 when lossy', () => {
    const result = pbjson('check', fixturePath('user-order.json'), '--proto', fixturePath('user-order.proto'), '--type', 'shop.Order')
    assert.equal(result.status, 1, result.stderr)
    assert.equal(result.stdout, `lossy: 1 difference\n  $.items[1].price: expected 0.1, actual ${FLOAT_OF_0_1}\n`)
  })

  it('exits 2 with one line on stderr for an unreadable file, invalid JSON, a bad .proto or bad arguments', () => {
    const invalidJson = join(scratch, 'invalid.json')
    writeFileSync(invalidJson, '{"a": [1, 2,]}')
    const badProto = join(scratch, 'bad.proto')
    writeFileSync(badProto, 'message {')
    assertOneLineError(pbjson('infer', join(scratch, 'missing.json')), /^cannot read .*missing\.json: ENOENT$/)
    assertOneLineError(pbjson('infer', invalidJson), /invalid\.json: invalid JSON at line 1, column 13: unexpected character "\]"/)
    assertOneLineError(pbjson('check', fixturePath('user-order.json'), '--proto', badProto), /bad\.proto: illegal/)
    assertOneLineError(pbjson('check', fixturePath('user-order.json')), /Missing required argument: proto/)
    assertOneLineError(pbjson('infer', fixturePath('user-order.json'), '--type', 'not valid'), /invalid message name "not valid"/)
    assertOneLineError(pbjson(), /name a command/)
  })

  it('--help shows the commands and examples', () => {
    const result = pbjson('--help')
    assert.equal(result.status, 0)
    assert.match(result.stdout, /pbjson infer <json>/)
    assert.match(result.stdout, /Examples:/)
  })
})
