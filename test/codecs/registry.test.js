import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawnSync } from 'node:child_process'
import { addCodecModules, codecModules, createCodec, formatNames, loadFormat } from '../../lib/codecs/registry.js'
import { UsageError } from '../../lib/errors.js'
import { compileSchema } from '../../lib/schema/compile.js'
import { TESTS, loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { runScript, temporaryDirectory } from '../helpers.js'

const BUILT_IN = ['avro', 'cbor', 'fast-json', 'google-protobuf', 'json', 'json-validated', 'msgpack', 'protobuf', 'protobuf-es']
const PROTOBUF_IMPLEMENTATIONS = ['protobuf', 'protobuf-es', 'google-protobuf']
const FIXTURES = path.join(import.meta.dirname, '../fixtures/codecs')

/** A codec module written for one test, in a directory of its own. */
function moduleFile (name, text) {
  const file = path.join(temporaryDirectory('codec'), name)
  fs.writeFileSync(file, text)
  return file
}

const usage = (pattern) => (err) => err instanceof UsageError && pattern.test(err.message)

for (const info of TESTS) {
  for (const format of BUILT_IN) {
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
}

test('the formats are the modules in lib/codecs/formats/, each declaring its name, frames and capabilities', async () => {
  assert.deepEqual(formatNames().slice(0, BUILT_IN.length), BUILT_IN)
  const declared = {}
  for (const name of BUILT_IN) {
    const { format, binary, customPayloads, registersSchema, file } = await loadFormat(name)
    assert.equal(file, null, 'built in')
    declared[format] = [binary ? 'binary' : 'text', customPayloads ? 'any payload' : 'built-in tests', registersSchema ? 'registers' : '-']
  }
  assert.deepEqual(declared, {
    avro: ['binary', 'built-in tests', '-'],
    cbor: ['binary', 'any payload', '-'],
    'fast-json': ['text', 'any payload', '-'],
    'google-protobuf': ['binary', 'built-in tests', '-'],
    json: ['text', 'any payload', '-'],
    'json-validated': ['text', 'any payload', 'registers'],
    msgpack: ['binary', 'any payload', '-'],
    protobuf: ['binary', 'any payload', 'registers'],
    'protobuf-es': ['binary', 'built-in tests', '-']
  })
})

test('codecs: made once per format and built-in test, each time for a user\'s payload; refused where a format cannot carry one', async () => {
  assert.equal(await createCodec('protobuf', resolveTest(3)), await createCodec('protobuf', resolveTest(3)), 'cached')
  assert.notEqual(await createCodec('protobuf', resolveTest(3)), await createCodec('protobuf', resolveTest(2)))
  const custom = { custom: true, name: 'custom', type: compileSchema('syntax = "proto3";\nmessage A { int32 x = 1; }', 'A') }
  assert.notEqual(await createCodec('protobuf', custom), await createCodec('protobuf', custom), 'a user\'s payload brings its own type: never cached')
  await assert.rejects(createCodec('avro', custom), usage(/^format 'avro' does not carry a payload of your own: it works from a built-in test's schema$/))
  await assert.rejects(createCodec('xml', resolveTest(1)), usage(/^unknown format 'xml': expected one of avro, cbor, .*, or add it with --codec-module <file\.js>$/))
})

test('decode throws on truncated protobuf and invalid JSON', async () => {
  const protobuf = await createCodec('protobuf', resolveTest(3))
  const frame = Buffer.from(protobuf.encode(protobuf.prepare(loadPayload(resolveTest(3)))))
  assert.throws(() => protobuf.decode(frame.subarray(0, frame.length - 3)))
  const json = await createCodec('json', resolveTest(3))
  assert.throws(() => json.decode(Buffer.from('{"a":')))
})

test('addCodecModules: a text and a binary module join the formats, told the test\'s name, schema and messages', async () => {
  const files = ['json-envelope.js', 'pbjs-reflect.js'].map((file) => path.join(FIXTURES, file))
  assert.deepEqual(await addCodecModules(files), ['json-envelope', 'pbjs-reflect'])
  assert.deepEqual(await addCodecModules([path.relative(process.cwd(), files[0])]), ['json-envelope'], 'the same file again: nothing new')
  assert.deepEqual(formatNames().slice(-2), ['json-envelope', 'pbjs-reflect'])
  assert.deepEqual(codecModules(), files)
  const info = resolveTest('person')
  const payload = loadPayload(info)
  const envelope = await createCodec('json-envelope', info)
  assert.deepEqual([envelope.name, envelope.binary], ['json-envelope', false])
  assert.equal(envelope.encode(envelope.prepare(payload)), JSON.stringify({ type: 'person', data: payload }))
  const reflect = await createCodec('pbjs-reflect', info)
  assert.deepEqual([reflect.name, reflect.binary], ['pbjs-reflect', true])
  const protobuf = await createCodec('protobuf', info)
  const bytes = Buffer.from(protobuf.encode(protobuf.prepare(payload)))
  assert.deepEqual(Buffer.from(reflect.encode(reflect.prepare(payload))), bytes, 'the same bytes as the generated code')
  assert.deepStrictEqual(reflect.toPlain(reflect.decode(bytes)), payload, 'a class\'s methods keep their this')
  assert.equal((await loadFormat('pbjs-reflect')).customPayloads, false)
  await assert.rejects(createCodec('pbjs-reflect', { custom: true, name: 'custom' }), usage(/^format 'pbjs-reflect' does not carry a payload of your own/))
})

test('addCodecModules refuses, in one line each, what cannot be a format', async () => {
  const cases = [
    [path.join(os.tmpdir(), 'no-such-codec.js'), /^--codec-module \S+no-such-codec\.js: no such file$/],
    [moduleFile('broken.js', 'export const format = "x"\nconst binary = ;\nexport function codecFor () {}\n'), /^--codec-module \S+broken\.js: cannot import it: SyntaxError: Unexpected token ';' at \/\S+broken\.js:2$/],
    [moduleFile('throws.js', 'throw new Error("no config")\n'), /^--codec-module \S+throws\.js: cannot import it: Error: no config$/],
    [moduleFile('no-codec.js', 'export const format = "x"\nexport const binary = true\n'), /: exports no codecFor\(test\) function$/],
    [moduleFile('no-format.js', 'export const binary = true\nexport const codecFor = () => ({})\n'), /: exports no format name \(export const format = 'my-format'\)$/],
    [moduleFile('no-binary.js', 'export const format = "x"\nexport const codecFor = () => ({})\n'), /: exports no binary flag/],
    [moduleFile('bad-name.js', 'export const format = "my format"\nexport const binary = true\nexport const codecFor = () => ({})\n'), /: format 'my format' must be 1-40 of A-Z, a-z, 0-9/],
    [moduleFile('taken.js', 'export const format = "json"\nexport const binary = false\nexport const codecFor = () => ({})\n'), /: format 'json' is taken \(built in\); name yours otherwise$/]
  ]
  for (const [file, pattern] of cases) await assert.rejects(addCodecModules([file]), usage(pattern), file)
  const first = moduleFile('twice.js', 'export const format = "twice"\nexport const binary = true\nexport const codecFor = () => ({})\n')
  const second = moduleFile('twice.js', 'export const format = "twice"\nexport const binary = true\nexport const codecFor = () => ({})\n')
  await addCodecModules([first])
  await assert.rejects(addCodecModules([second]), usage(new RegExp(`: format 'twice' is taken \\(by ${first.replace(/[.]/g, '\\.')}\\)`)))
  await assert.rejects(createCodec('twice', resolveTest(1)), usage(/^twice: codecFor\(numbers\) returned no encode\(\) function$/), 'a codec without its methods')
})

test('the smallest module: encode and decode alone (messages held as they are), as CommonJS or a default export, any URL-safe name', async () => {
  const files = [
    moduleFile('small.cjs', 'module.exports = { format: "Tiny-CJS", binary: false, codecFor: () => ({ encode: JSON.stringify, decode: (frame) => JSON.parse(frame) }) }\n'),
    moduleFile('default.js', 'export default { format: "tiny.default", binary: true, codecFor: () => ({ encode: (v) => Buffer.from(JSON.stringify(v)), decode: (frame) => JSON.parse(frame) }) }\n')
  ]
  assert.deepEqual(await addCodecModules(files), ['Tiny-CJS', 'tiny.default'])
  const payload = loadPayload(resolveTest(3))
  for (const [format, binary] of [['Tiny-CJS', false], ['tiny.default', true]]) {
    const codec = await createCodec(format, resolveTest(3))
    assert.deepEqual([codec.name, codec.binary], [format, binary])
    assert.equal(codec.prepare(payload), payload, 'prepare: the message as it is')
    assert.deepStrictEqual(codec.toPlain(codec.decode(Buffer.from(codec.encode(codec.prepare(payload))))), payload)
  }
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

// CI installs protoc and fetches a protoc with --js_out (PROTOC_JS): there, their absence fails the tests that need them.
const PROTOC_MISSING = !process.env.CI && spawnSync('protoc', ['--version']).error && 'protoc is not installed'

test('the committed protobuf-es code is what npm run gen:proto-es writes from proto/', { skip: PROTOC_MISSING }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-es-'))
  const script = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts['gen:proto-es']
  const run = spawnSync(script.replace('--es_out=vendor/protobuf-es', `--es_out=${out}`), { shell: true, cwd: new URL('../..', import.meta.url), encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assertSameFiles(new URL('../../vendor/protobuf-es/', import.meta.url), out)
  fs.rmSync(out, { recursive: true })
})

test('the committed google-protobuf code is what npm run gen:proto-google writes (PROTOC_JS: a protoc with --js_out)', { skip: !process.env.PROTOC_JS && !process.env.CI && 'PROTOC_JS is not set (.ci/run sets it)' }, async () => {
  assert.ok(process.env.PROTOC_JS, 'PROTOC_JS is set (.ci/run sets it: bash .ci/protoc-js.sh)')
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-google-'))
  const run = await runScript('tools/gen-google-protobuf.js', ['--out', out])
  assert.equal(run.code, 0, run.stderr)
  assertSameFiles(new URL('../../vendor/google-protobuf/', import.meta.url), out)
  fs.rmSync(out, { recursive: true })
})

test('gen:proto-google refuses, in one line, a protoc without the JavaScript generator', { skip: PROTOC_MISSING }, async () => {
  const run = await runScript('tools/gen-google-protobuf.js', ['--out', path.join(os.tmpdir(), 'never-written')], { env: { PROTOC_JS: 'protoc' } })
  assert.equal(run.code, 2)
  assert.match(run.stderr, /^protoc has no JavaScript generator \(--js_out; protoc 3\.20 and later moved it out\): set PROTOC_JS to one that has \(bash \.ci\/protoc-js\.sh fetches one\)\n$/)
})
