// docs/protocol.md, the wire protocol written for servers in other languages, kept in step with the
// code it describes: lib/protocol.js's constants and functions, the server's close codes and
// /metrics, the test catalog, the formats and the people rule. A change to any of them without the
// page fails here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import * as protocol from '../lib/protocol.js'
import { ROOT } from './helpers.js'
import { TESTS } from '../lib/payloads/catalog.js'
import { hasStream } from '../lib/payloads/streams.js'
import { formatNames, loadFormat } from '../lib/codecs/registry.js'
import { createMetrics } from '../lib/server/metrics.js'
import { ServerStats } from '../lib/server/stats.js'

const DOC = fs.readFileSync(path.join(ROOT, 'docs/protocol.md'), 'utf8')

/**
 * The rows of the first table under a heading, as arrays of trimmed cells, header and rule left out.
 * @param {string} heading the heading's text, e.g. 'Close codes'
 * @returns {string[][]}
 */
function tableUnder (heading) {
  const lines = DOC.split('\n')
  const start = lines.findIndex((line) => new RegExp(`^#+ ${heading.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`).test(line))
  assert.ok(start >= 0, `docs/protocol.md has no heading "${heading}"`)
  const table = []
  for (const line of lines.slice(start + 1)) {
    if (line.startsWith('#')) break
    if (line.startsWith('|')) table.push(line.slice(1, -1).split('|').map((cell) => cell.trim()))
    else if (table.length) break
  }
  assert.ok(table.length > 2, `no table under "${heading}"`)
  return table.slice(2)
}

/** The first cell's code span, `name` -> name. */
const codeOf = (cell) => /^`([^`]+)`$/.exec(cell)?.[1] ?? cell

/** How the constants table spells a value: JSON for strings, decimal or 0x hex for numbers. */
function spelledIn (cell, value) {
  if (typeof value === 'string') return cell.includes(`\`${JSON.stringify(value)}\``)
  return cell.includes(`\`${value}\``) || cell.includes(`\`0x${value.toString(16)}\``)
}

const exported = Object.entries(protocol)
const constants = exported.filter(([, value]) => typeof value !== 'function')
const functions = exported.filter(([, value]) => typeof value === 'function').map(([name]) => name)

test('the constants table lists every constant lib/protocol.js exports, each with its value, and no other', () => {
  const rows = new Map(tableUnder('The constants').map(([name, value]) => [codeOf(name), value]))
  assert.deepEqual([...rows.keys()].sort(), constants.map(([name]) => name).sort())
  for (const [name, value] of constants) {
    const cell = rows.get(name)
    const entries = typeof value === 'object' ? Object.entries(value) : [[null, value]]
    for (const [key, leaf] of entries) {
      // An array's keys are its indexes: only an object's are named in the cell.
      if (key !== null && !Array.isArray(value)) assert.ok(cell.includes(key), `${name}: ${key} is not named in "${cell}"`)
      assert.ok(spelledIn(cell, leaf), `${name}: ${JSON.stringify(leaf)} is not in "${cell}"`)
    }
  }
})

test('every function lib/protocol.js exports is named on the page', () => {
  assert.deepEqual(functions.filter((name) => !DOC.includes(`\`${name}()\``)), [])
})

test('the upgrade URL\'s parameters are QUERY\'s, and the directions, payload kinds and roles are spelled out', () => {
  const rows = tableUnder('The upgrade URL')
  assert.deepEqual(rows.map(([name]) => codeOf(name)).sort(), Object.values(protocol.QUERY).sort())
  const valuesOf = (name) => rows.find(([parameter]) => codeOf(parameter) === name)[1]
  for (const [name, values] of [['direction', protocol.DIRECTIONS], ['payload', protocol.PAYLOAD_KINDS], ['role', protocol.ROLES]]) {
    assert.deepEqual([...valuesOf(name).matchAll(/`([^`]+)`/g)].map((match) => match[1]), [...values], name)
  }
})

test('the close codes table has a row for each of CLOSE_CODES', () => {
  const codes = tableUnder('Close codes').map(([code]) => code)
  for (const code of Object.values(protocol.CLOSE_CODES)) assert.ok(codes.includes(String(code)), `no row for ${code}`)
})

test('the example header is what fanoutHeader writes for the publish it says', () => {
  assert.ok(DOC.includes(`\`${protocol.fanoutHeader(true, 5, 1764000000123456)}\` is measured publish 5, due at 1764000000123456 µs`))
  assert.equal(protocol.FANOUT_HEADER_BYTES, 24, 'the header table numbers its bytes 0 to 23')
})

test('the /metrics table lists every metric the server counts in, and only metrics it exports', async () => {
  const registry = createMetrics(new ServerStats())
  const exportedMetrics = (await registry.getMetricsAsJSON()).map(({ name }) => name)
  const documented = tableUnder('GET /metrics').map(([name]) => codeOf(name))
  assert.deepEqual(exportedMetrics.filter((name) => name.startsWith('wsbench_')).sort(),
    documented.filter((name) => name.startsWith('wsbench_')).sort())
  assert.deepEqual(documented.filter((name) => !exportedMetrics.includes(name)), [])
})

test('the tests table is the catalog: numbers, names, message types, schemas, which have a stream', () => {
  const rows = tableUnder('The tests').map(([id, name, type, schema, stream]) => ({
    id: id ? Number(id) : null, name: codeOf(name), typeName: codeOf(type), protoFile: schema.replace(/^proto\//, ''), stream: stream === 'yes'
  }))
  assert.deepEqual(rows, TESTS.map((info) => ({ id: info.id, name: info.name, typeName: info.typeName, protoFile: info.protoFile, stream: hasStream(info) })))
})

test('the formats table is the built-in formats: their frames, a user\'s payload, schema registration', async () => {
  const rows = tableUnder('Formats and frames').map(([name, frames, custom, registers]) => [codeOf(name), frames, custom, registers])
  const yes = (flag) => flag ? 'yes' : 'no'
  const formats = await Promise.all(formatNames().map((name) => loadFormat(name)))
  assert.deepEqual(rows.sort(), formats.map((format) =>
    [format.format, format.binary ? 'binary' : 'text', yes(format.customPayloads), yes(format.registersSchema)]).sort())
})

test('the people rule on the page builds the very message the fixtures\' manifest hashes', () => {
  const person = /person \*i\*, from 0, is [^\n]*\n\n```text\n(.+)\n```/.exec(DOC)?.[1]
  assert.ok(person, 'the rule\'s line')
  const count = Number(/with ([\d,]+) persons/.exec(DOC)[1].replaceAll(',', ''))
  const text = `{"person":[${Array.from({ length: count }, (_, i) => person.replaceAll('<i>', String(i))).join(',')}]}`
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures/manifest.json'), 'utf8'))
  const { repeated } = manifest.tests.find((entry) => entry.name === 'people')
  assert.equal(Buffer.byteLength(text), repeated.bytes)
  assert.equal(crypto.createHash('sha256').update(text).digest('hex'), repeated.sha256)
})
