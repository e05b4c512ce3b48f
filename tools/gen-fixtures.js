#!/usr/bin/env node
// npm run gen:fixtures: writes fixtures/, what a server in another language loads instead of
// porting JavaScript (docs/protocol.md#fixtures): each built-in test's seeded stream as gzipped
// JSON Lines, the schemas the codecs derive (Avro, fast-json's JSON Schema, json-validated's),
// and a manifest. Options:
//   --check       change nothing; exit 1 naming the files that are out of date
//   --dir <dir>   write (or check) there instead of fixtures/
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { parseArgs } from 'node:util'
import zlib from 'node:zlib'
import { UsageError, runMain } from '../lib/errors.js'
import { PROJECT_ROOT } from '../lib/processes.js'
import { TESTS, everyMessage, loadMessages } from '../lib/payloads/catalog.js'
import { STREAM_SEED, hasStream } from '../lib/payloads/streams.js'
import { learnShape } from '../lib/schema/shape.js'
import { builtInType } from '../lib/schema/compile.js'
import { jsonSchemaOfType } from '../lib/schema/json-schema.js'
import { avroSchemaOf } from '../lib/codecs/formats/avro.js'
import { jsonSchemaOf } from '../lib/codecs/formats/fast-json.js'

/** Where the fixtures are committed, from the project root. */
export const FIXTURES_DIR = 'fixtures'

/**
 * The schemas a codec derives for a built-in test, by format: Avro and fast-json from every message
 * the test may send (their shape), json-validated from the test's protobuf type.
 */
const SCHEMAS = {
  avro: (test, shape) => avroSchemaOf(shape),
  'fast-json': (test, shape) => jsonSchemaOf(shape),
  'json-validated': (test) => jsonSchemaOfType(builtInType(test.typeName))
}

const USAGE = 'Usage: npm run gen:fixtures [-- --check] [-- --dir <dir>]'

const jsonFile = (value) => Buffer.from(`${JSON.stringify(value, null, 2)}\n`)
const sha256 = (buffer) => crypto.createHash('sha256').update(buffer).digest('hex')
/** A text as the manifest describes it: its size and hash, to check a copy or a port against. */
const digest = (buffer) => ({ bytes: buffer.length, sha256: sha256(buffer) })

/**
 * Every fixture file and its content, uncompressed (a `.gz` file is written gzipped), by its path
 * under the fixtures folder.
 * @returns {Map<string, Buffer>}
 */
export function fixtureFiles () {
  const files = new Map()
  const tests = TESTS.map((test) => {
    const [message] = loadMessages(test, { repeat: true }).messages
    const entry = {
      id: test.id,
      name: test.name,
      typeName: test.typeName,
      protoFile: `proto/${test.protoFile}`,
      // The one message (payload=repeated): the frame is its compact JSON; people's is built by rule.
      repeated: { file: test.dataFile ? `data/${test.dataFile}` : null, ...digest(Buffer.from(JSON.stringify(message))) },
      stream: null,
      schemas: {}
    }
    if (hasStream(test)) {
      const { messages } = loadMessages(test)
      const file = `streams/${test.name}.jsonl.gz`
      const text = Buffer.from(messages.map((each) => `${JSON.stringify(each)}\n`).join(''))
      files.set(file, text)
      entry.stream = { file: `${FIXTURES_DIR}/${file}`, seed: STREAM_SEED, messages: messages.length, ...digest(text) }
    }
    const shape = learnShape(everyMessage(test))
    for (const [format, schemaOf] of Object.entries(SCHEMAS)) {
      const file = `schemas/${test.name}.${format}.json`
      files.set(file, jsonFile(schemaOf(test, shape)))
      entry.schemas[format] = `${FIXTURES_DIR}/${file}`
    }
    return entry
  })
  files.set('manifest.json', jsonFile({
    about: 'Written by npm run gen:fixtures (tools/gen-fixtures.js) from lib/payloads and the codecs: do not edit. ' +
      'What each file is: docs/protocol.md#fixtures. Paths are from the project root; bytes and sha256 are of the uncompressed text.',
    tests
  }))
  return files
}

/** A fixture file's content as committed, uncompressed; null when it is missing or unreadable. */
function readFixture (file) {
  try {
    const content = fs.readFileSync(file)
    return file.endsWith('.gz') ? zlib.gunzipSync(content) : content
  } catch {
    return null
  }
}

/**
 * The files of `dir` that differ from `files`: missing, changed, or there but not a fixture. A
 * gzipped file is compared by its content, so another zlib's bytes for the same text are not stale.
 * @param {string} dir
 * @param {Map<string, Buffer>} files as fixtureFiles gives them
 * @returns {{changed: string[], extra: string[]}} paths under dir, sorted
 */
export function staleFixtures (dir, files) {
  const changed = [...files].filter(([file, content]) => !readFixture(path.join(dir, file))?.equals(content)).map(([file]) => file)
  const present = fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).map((file) => file.split(path.sep).join('/')) : []
  const extra = present.filter((file) => !files.has(file) && fs.statSync(path.join(dir, file)).isFile())
  return { changed: changed.sort(), extra: extra.sort() }
}

/**
 * Brings `dir` up to date: writes the changed files, removes the extra ones.
 * @param {string} dir
 * @param {Map<string, Buffer>} files as fixtureFiles gives them
 * @param {{changed: string[], extra: string[]}} stale as staleFixtures found them
 */
export function writeFixtures (dir, files, { changed, extra }) {
  for (const file of changed) {
    const target = path.join(dir, file)
    fs.mkdirSync(path.dirname(target), { recursive: true })
    const content = files.get(file)
    fs.writeFileSync(target, file.endsWith('.gz') ? zlib.gzipSync(content, { level: 9 }) : content)
  }
  for (const file of extra) fs.rmSync(path.join(dir, file))
}

async function main () {
  let values
  try {
    ({ values } = parseArgs({
      options: {
        help: { type: 'boolean', short: 'h', default: false },
        check: { type: 'boolean', default: false },
        dir: { type: 'string', default: path.join(PROJECT_ROOT, FIXTURES_DIR) }
      }
    }))
  } catch (err) {
    throw new UsageError(`${err.message} (${USAGE})`)
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n\nWrites ${FIXTURES_DIR}/: each built-in test's stream and derived schemas, for servers in other languages ` +
      '(docs/protocol.md#fixtures).\n--check changes nothing and exits 1 when a file is out of date.\n')
    return 0
  }
  const dir = path.resolve(values.dir)
  const where = path.relative(process.cwd(), dir) || '.'
  const files = fixtureFiles()
  const stale = staleFixtures(dir, files)
  const names = [...stale.changed, ...stale.extra].map((file) => `${where}/${file}`)
  if (values.check) {
    if (names.length) {
      process.stderr.write(`out of date with lib/payloads and the codecs: ${names.join(', ')} (run npm run gen:fixtures)\n`)
      return 1
    }
  } else {
    writeFixtures(dir, files, stale)
  }
  process.stdout.write(names.length ? `updated ${names.join(', ')}\n` : `up to date: ${files.size} files in ${where}\n`)
  return 0
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.join(PROJECT_ROOT, 'tools/gen-fixtures.js')
if (isMain) runMain(main)
