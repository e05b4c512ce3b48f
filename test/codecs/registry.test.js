import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { CUSTOM_FORMATS, FORMATS, createCodec, loadCodecs } from '../../lib/codecs/registry.js'
import { UsageError } from '../../lib/errors.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { runScript } from '../helpers.js'

const PROTOBUF_IMPLEMENTATIONS = ['protobuf', 'protobuf-dynamic', 'protobuf-es', 'google-protobuf']

for (const info of TESTS) {
  for (const format of [...FORMATS, 'protobuf-dynamic']) {
    test(`test ${info.name} round-trips exactly in ${format}`, async () => {
      const codec = await createCodec(format, info)
      const payload = loadPayload(info)
      const frame = codec.encode(codec.prepare(payload))
      assert.equal(typeof frame === 'string', !codec.binary, 'text formats make strings, binary ones bytes')
      assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(frame))), payload)
    })
  }
  test(`test ${info.name}: every protobuf implementation decodes every other's bytes to the same payload`, async () => {
    const payload = loadPayload(info)
    const codecs = await Promise.all(PROTOBUF_IMPLEMENTATIONS.map((format) => createCodec(format, info)))
    for (const writer of codecs) {
      const frame = Buffer.from(writer.encode(writer.prepare(payload)))
      for (const reader of codecs) assert.deepStrictEqual(reader.toPlain(reader.decode(frame)), payload, `${writer.name} -> ${reader.name}`)
    }
  })
  test(`test ${info.name}: generated and reflected protobuf write the same bytes`, async () => {
    const [generated, reflected] = await Promise.all(['protobuf', 'protobuf-dynamic'].map((format) => createCodec(format, info)))
    const payload = loadPayload(info)
    assert.deepEqual(Buffer.from(generated.encode(generated.prepare(payload))), Buffer.from(reflected.encode(reflected.prepare(payload))))
  })
}

test('every wire format declares its name, frame type and whether it needs a schema', async () => {
  assert.deepEqual(FORMATS, ['json', 'protobuf', 'protobuf-es', 'google-protobuf', 'fast-json', 'msgpack', 'cbor', 'avro'])
  const codecs = await Promise.all(FORMATS.map((format) => createCodec(format, resolveTest(1))))
  const declared = Object.fromEntries(FORMATS.map((format, i) => {
    const codec = codecs[i]
    return [codec.name, [codec.binary ? 'binary' : 'text', codec.needsSchema]]
  }))
  assert.deepEqual(declared, {
    json: ['text', false],
    protobuf: ['binary', true],
    'protobuf-es': ['binary', true],
    'google-protobuf': ['binary', true],
    'fast-json': ['text', true],
    msgpack: ['binary', false],
    cbor: ['binary', false],
    avro: ['binary', true]
  })
  await assert.rejects(createCodec('xml', resolveTest(1)), /unknown format 'xml'/)
})

test('loadCodecs: built-in codecs made once per format and test, custom ones each time, custom refused where a format cannot carry it', async () => {
  const protobuf = await loadCodecs('protobuf')
  assert.equal(protobuf(resolveTest(3)), await createCodec('protobuf', resolveTest(3)), 'cached')
  assert.notEqual(protobuf(resolveTest(3)), protobuf(resolveTest(2)))
  const custom = { custom: true, type: compileSchema('syntax = "proto3";\nmessage A { int32 x = 1; }', 'A') }
  assert.notEqual(protobuf(custom), protobuf(custom), 'a custom test brings its own type: never cached')
  assert.deepEqual(CUSTOM_FORMATS, ['json', 'protobuf', 'fast-json', 'msgpack', 'cbor'])
  for (const format of FORMATS.filter((name) => !CUSTOM_FORMATS.includes(name))) {
    const make = await loadCodecs(format)
    assert.throws(() => make({ custom: true }), (err) => err instanceof UsageError && err.message === `format '${format}' does not support custom payloads: use json, protobuf, fast-json, msgpack, cbor`, format)
  }
  await assert.rejects(loadCodecs('protobuf-static'), (err) => err instanceof UsageError && /^unknown format 'protobuf-static': expected one of json, protobuf, /.test(err.message))
})

test('decode throws on truncated protobuf and invalid JSON', async () => {
  const protobuf = await createCodec('protobuf', resolveTest(3))
  const frame = Buffer.from(protobuf.encode(protobuf.prepare(loadPayload(resolveTest(3)))))
  assert.throws(() => protobuf.decode(frame.subarray(0, frame.length - 3)))
  const json = await createCodec('json', resolveTest(3))
  assert.throws(() => json.decode(Buffer.from('{"a":')))
})

test('no schema declares float, so no non-integer is rounded to 32 bits', () => {
  for (const file of fs.readdirSync(new URL('../../proto/', import.meta.url)).filter((name) => name.endsWith('.proto'))) {
    assert.doesNotMatch(fs.readFileSync(new URL(`../../proto/${file}`, import.meta.url), 'utf8'), /^\s*(optional |repeated )?float /m, file)
  }
})

/** Asserts that a freshly generated directory holds exactly the committed files, byte for byte. */
function assertSameFiles (committed, generated) {
  const files = fs.readdirSync(generated).sort()
  assert.deepEqual(fs.readdirSync(committed).sort(), files)
  for (const file of files) assert.equal(fs.readFileSync(new URL(file, committed), 'utf8'), fs.readFileSync(path.join(generated, file), 'utf8'), file)
}

const PROTOC_MISSING = spawnSync('protoc', ['--version']).error && 'protoc is not installed'

test('the committed protobuf-es code is what npm run gen:proto-es writes from proto/', { skip: PROTOC_MISSING }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-es-'))
  const script = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts['gen:proto-es']
  const run = spawnSync(script.replace('--es_out=vendor/protobuf-es', `--es_out=${out}`), { shell: true, cwd: new URL('../..', import.meta.url), encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assertSameFiles(new URL('../../vendor/protobuf-es/', import.meta.url), out)
  fs.rmSync(out, { recursive: true })
})

test('the committed google-protobuf code is what npm run gen:proto-google writes (PROTOC_JS: a protoc with --js_out)', { skip: !process.env.PROTOC_JS && 'PROTOC_JS is not set (.ci/run sets it)' }, async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-google-'))
  const run = await runScript('bin/gen-google-protobuf.js', ['--out', out])
  assert.equal(run.code, 0, run.stderr)
  assertSameFiles(new URL('../../vendor/google-protobuf/', import.meta.url), out)
  fs.rmSync(out, { recursive: true })
})

test('gen:proto-google refuses, in one line, a protoc without the JavaScript generator', { skip: PROTOC_MISSING }, async () => {
  const run = await runScript('bin/gen-google-protobuf.js', ['--out', path.join(os.tmpdir(), 'never-written')], { env: { PROTOC_JS: 'protoc' } })
  assert.equal(run.code, 2)
  assert.match(run.stderr, /^protoc has no JavaScript generator \(--js_out; protoc 3\.20 and later moved it out\): set PROTOC_JS to one that has \(bash \.ci\/protoc-js\.sh fetches one\)\n$/)
})
