// tools/gen-fixtures.js: the fixtures are what the clients send and the codecs derive, exactly (each
// stream line the json codec's frame, each schema one that writes or accepts what its codec does),
// the manifest describes them truly, and staleness is judged by content.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import avro from 'avsc'
import fastJson from 'fast-json-stringify'
import { validator } from '@exodus/schemasafe'
import { FIXTURES_DIR, fixtureFiles, staleFixtures, writeFixtures } from '../tools/gen-fixtures.js'
import { TESTS, everyMessage, loadMessages, loadPayload } from '../lib/payloads/catalog.js'
import { createCodec } from '../lib/codecs/registry.js'
import { ROOT } from './helpers.js'

const files = fixtureFiles()
const manifest = JSON.parse(files.get('manifest.json'))
const entryOf = (name) => manifest.tests.find((entry) => entry.name === name)
/** A fixture's content by its path from the project root, as the manifest gives it. */
const fixture = (projectPath) => files.get(path.relative(FIXTURES_DIR, projectPath))
const schemaOf = (info, format) => JSON.parse(fixture(entryOf(info.name).schemas[format]))
const sha256 = (text) => crypto.createHash('sha256').update(text).digest('hex')

test('the manifest names every built-in test in the catalog\'s order, with files that exist', () => {
  assert.deepEqual(manifest.tests.map(({ id, name, typeName }) => ({ id, name, typeName })),
    TESTS.map(({ id, name, typeName }) => ({ id, name, typeName })))
  for (const entry of manifest.tests) {
    for (const file of [entry.protoFile, entry.repeated.file].filter(Boolean)) assert.ok(fs.existsSync(path.join(ROOT, file)), file)
    for (const file of [entry.stream?.file, ...Object.values(entry.schemas)].filter(Boolean)) assert.ok(fixture(file), file)
  }
})

test('each stream is the test\'s, one line per message as the json codec sends it; the manifest says how many, their size and hash', async () => {
  for (const info of TESTS) {
    const { stream, repeated } = entryOf(info.name)
    const json = await createCodec('json', info)
    const one = Buffer.from(json.encode(loadPayload(info)))
    assert.deepEqual(repeated, { file: info.dataFile ? `data/${info.dataFile}` : null, bytes: one.length, sha256: sha256(one) }, info.name)
    if (info.name === 'people') {
      assert.equal(stream, null, 'people has no stream: its one message is built by rule')
      continue
    }
    const text = fixture(stream.file)
    const lines = text.toString('utf8').split('\n')
    assert.equal(lines.pop(), '', 'every line ends with a newline')
    const { messages } = loadMessages(info)
    assert.deepEqual(lines, messages.map((message) => json.encode(message)), info.name)
    assert.deepEqual({ messages: stream.messages, bytes: stream.bytes, sha256: stream.sha256 },
      { messages: messages.length, bytes: text.length, sha256: sha256(text) }, info.name)
  }
})

test('the Avro schema writes every message to the very bytes the avro codec writes', async () => {
  for (const info of TESTS) {
    const type = avro.Type.forSchema(schemaOf(info, 'avro'))
    const codec = await createCodec('avro', info)
    for (const message of everyMessage(info)) assert.ok(type.toBuffer(message).equals(codec.encode(codec.prepare(message))), info.name)
  }
})

test('fast-json\'s JSON Schema serializes every message as JSON.stringify does', () => {
  for (const info of TESTS) {
    const stringify = fastJson(schemaOf(info, 'fast-json'))
    for (const message of everyMessage(info)) assert.equal(stringify(message), JSON.stringify(message), info.name)
  }
})

test('json-validated\'s JSON Schema accepts every message, and refuses one whose first field changed its kind', () => {
  for (const info of TESTS) {
    const validate = validator(schemaOf(info, 'json-validated'), { isJSON: true, unmodifiedPrototypes: true })
    const messages = everyMessage(info)
    assert.deepEqual(messages.filter((message) => !validate(message)), [], info.name)
    const [key, value] = Object.entries(messages[0])[0]
    assert.equal(validate({ ...messages[0], [key]: typeof value === 'string' ? 5 : 'x' }), false, `${info.name}: ${key}`)
  }
})

test('staleFixtures finds missing, changed and extra files, and judges a gzipped file by its text; writeFixtures mends them', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fixtures-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  assert.deepEqual(staleFixtures(dir, files), { changed: [...files.keys()].sort(), extra: [] }, 'an empty folder')
  writeFixtures(dir, files, staleFixtures(dir, files))
  assert.deepEqual(staleFixtures(dir, files), { changed: [], extra: [] })

  const stream = path.join(dir, 'streams/small.jsonl.gz')
  fs.writeFileSync(stream, zlib.gzipSync(zlib.gunzipSync(fs.readFileSync(stream)), { level: 1 }))
  assert.deepEqual(staleFixtures(dir, files), { changed: [], extra: [] }, 'the same text compressed otherwise')

  fs.writeFileSync(path.join(dir, 'schemas/small.avro.json'), '{}\n')
  fs.writeFileSync(path.join(dir, 'streams/medium.jsonl.gz'), 'not gzip')
  fs.rmSync(path.join(dir, 'manifest.json'))
  fs.writeFileSync(path.join(dir, 'streams/retired.jsonl.gz'), '')
  const stale = staleFixtures(dir, files)
  assert.deepEqual(stale, { changed: ['manifest.json', 'schemas/small.avro.json', 'streams/medium.jsonl.gz'], extra: ['streams/retired.jsonl.gz'] })
  writeFixtures(dir, files, stale)
  assert.deepEqual(staleFixtures(dir, files), { changed: [], extra: [] })
  assert.equal(fs.existsSync(path.join(dir, 'streams/retired.jsonl.gz')), false)
})
