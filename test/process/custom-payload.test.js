// A user's own payload end to end: inferred or given schemas, fidelity before the run, schema
// registration with the server, and every documented failure as one line before any connection.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import WebSocket from 'ws'
import { runScript, startServerProcess, temporaryDirectory } from '../helpers.js'
import { deepDocuments, fiveMegabyteDocument } from '../fixtures/infer/support.js'

const FIXTURES = path.join(import.meta.dirname, '../fixtures/infer')
const fixture = (name) => path.join(FIXTURES, name)
const tempDir = temporaryDirectory('custom-payload')
const written = (name, text) => {
  const file = path.join(tempDir, name)
  fs.writeFileSync(file, text)
  return file
}

function assertOneLine ({ code, stderr }, pattern) {
  assert.equal(code, 2, stderr)
  const lines = stderr.trim().split('\n')
  assert.match(lines[lines.length - 1], pattern)
  assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace')
}

describe('a user\'s own payload, end to end', () => {
  describe('every payload, through node server.js and both clients', () => {
    let server
    before(async () => { server = await startServerProcess() })
    after(() => server.stop())

    const { objects, arrays } = deepDocuments()
    const payloads = [
      ...fs.readdirSync(FIXTURES).filter((name) => name.endsWith('.json') && name !== 'user-order.json').map(fixture),
      written('deep-objects.json', JSON.stringify(objects)),
      written('deep-arrays.json', JSON.stringify(arrays)),
      written('five-megabytes.json', fiveMegabyteDocument())
    ]
    for (const file of payloads) {
      // Twice the 4 in flight, so the window refills as acks come back; more only repeats the 5 MB document.
      test(path.basename(file), () => Promise.all(['json', 'protobuf'].map(async (format) => {
        const { code, stdout, stderr } = await runScript(`client_${format}.js`, ['--payload', file, '8', '--url', server.url, '--inflight', '4', '--json'])
        assert.equal(code, 0, `${format}: ${stderr}`)
        const report = JSON.parse(stdout)
        assert.deepEqual(report.messages, { sent: 8, acked: 8, errors: 0, lost: 0 }, format)
        assert.equal(report.test, 'custom')
        assert.equal(report.payloadFile, path.basename(file))
        assert.equal(report.schema, 'inferred')
        assert.equal(report.lossy, null)
      })))
    }

    test('a user\'s own lossless schemas (API response, GeoJSON) run as given', async () => {
      for (const [name, type] of [['api-response', 'pbjson.Payload'], ['geojson', 'Payload']]) {
        const run = await runScript('client_protobuf.js', ['--payload', fixture(`${name}.json`), '10', '--proto', fixture(`${name}.proto`), '--type', type, '--url', server.url, '--json'])
        assert.equal(run.code, 0, run.stderr)
        assert.equal(JSON.parse(run.stdout).schema, 'pbjson.Payload')
      }
    })

    test('a lossy schema (a double declared float) is refused with paths, and runs with --allow-lossy, reported lossy', async () => {
      const args = ['--payload', fixture('user-order.json'), '10', '--proto', fixture('user-order.proto'), '--type', 'shop.Order', '--url', server.url]
      const [refused, lossy, human] = await Promise.all([args, [...args, '--allow-lossy', '--json'], [...args, '--allow-lossy']].map((line) => runScript('client_protobuf.js', line)))
      assertOneLine(refused, /^the protobuf encoding is lossy for user-order\.json \(1 values differ\); fix the schema, or run anyway with --allow-lossy$/)
      assert.match(refused.stderr, /^ {2}\$\.items\[1\]\.price: expected 0\.1, actual 0\.10000000149011612$/m)
      assert.equal(refused.stdout, '')

      assert.equal(lossy.code, 0, lossy.stderr)
      const report = JSON.parse(lossy.stdout)
      assert.deepEqual(report.lossy, { differences: 1, messages: 1, examples: [{ path: '$.items[1].price', expected: 0.1, actual: 0.10000000149011612 }] })
      assert.deepEqual(report.messages, { sent: 10, acked: 10, errors: 0, lost: 0 })
      assert.match(human.stdout, /^LOSSY {5}the schema changed 1 value\(s\) of user-order\.json, first at \$\.items\[1\]\.price$/m)
    })

    test('broken input: one line, exit 2, before any connection', async () => {
      const cases = [
        [['--payload', path.join(tempDir, 'missing.json'), '5'], /^cannot read .*missing\.json: ENOENT$/],
        [['--payload', written('broken.json', '{"a": 1,'), '5'], /broken\.json: invalid JSON at line 1, column 9/],
        [['--payload', written('scalar.json', '42'), '5'], /the payload must be a JSON object or array, not number/],
        [['--payload', fixture('geojson.json'), '5', '--proto', written('bad.proto', 'message {')], /^--proto needs --type <message name>$/],
        [['--payload', fixture('geojson.json'), '5', '--proto', written('bad.proto', 'message {'), '--type', 'X'], /bad\.proto: illegal/],
        [['--payload', fixture('geojson.json'), '5', '--proto', fixture('geojson.proto'), '--type', 'Nope'], /no message type "Nope" \(it has pbjson\.Payload/],
        [['--payload', fixture('geojson.json'), '5', '--proto', written('huge.proto', `syntax = "proto3";\n//${'x'.repeat(1024 * 1024)}\nmessage A {}`), '--type', 'A'], /is \d+ bytes, more than the 1048576 allowed/],
        [['3', '5', '--payload', fixture('geojson.json')], /^give either a test \('3'\) or --payload, not both$/],
        [['--payload', fixture('geojson.json'), '5', '--direction', 'down'], /^--direction down needs a built-in test/],
        [['5'], null]
      ]
      await Promise.all(cases.map(async ([args, pattern]) => {
        const run = await runScript('client_protobuf.js', [...args, '--url', 'ws://127.0.0.1:1'])
        if (pattern) assertOneLine(run, pattern)
        else assert.match(run.stderr, /ECONNREFUSED/, 'a valid command line gets as far as connecting')
      }))
      assertOneLine(await runScript('client_json.js', ['--url', 'ws://127.0.0.1:1']), /^name a test \(1-5, people, person, counters\) or give --payload <file\.json>/)
    })
  })

  describe('schema registration on the server', () => {
    test('an uncompilable or oversized schema is refused with ERR and close 1008; the server stays up', async () => {
      const server = await startServerProcess(['--max-schema-bytes', '2000'])
      try {
        for (const [frame, reason] of [
          ['SCHEMA pbjson.Payload\nmessage {', /^ERR schema refused: registered schema: illegal/],
          ['hello', /^ERR schema refused: expected a schema registration first/],
          [`SCHEMA A\nsyntax = "proto3"; message A { string a = 1; }${' '.repeat(3000)}`, /^ERR schema refused: schema registration is \d+ bytes, more than the 2000 allowed/]
        ]) {
          const ws = new WebSocket(`${server.url}/?test=custom&format=protobuf`)
          await new Promise((resolve) => ws.once('open', resolve))
          ws.send(frame)
          const [reply] = await Promise.all([new Promise((resolve) => ws.once('message', (data) => resolve(String(data)))), new Promise((resolve) => ws.once('close', resolve))])
          assert.match(reply, reason)
          assert.equal(ws.readyState, WebSocket.CLOSED)
        }
        const big = await runScript('client_protobuf.js', ['--payload', fixture('api-response.json'), '5', '--url', server.url])
        assert.equal(big.code, 1)
        assert.match(big.stderr, /^error: server refused the handshake on .*: ERR schema refused: schema is \d+ bytes, more than the 2000 allowed \(--max-schema-bytes\)\n$/)
        const fine = await runScript('client_protobuf.js', ['--payload', fixture('nulls-and-presence.json'), '5', '--url', server.url, '--json'])
        assert.equal(fine.code, 0, fine.stderr)
        const json = await runScript('client_json.js', ['--payload', fixture('api-response.json'), '5', '--url', server.url, '--json'])
        assert.equal(json.code, 0, 'JSON needs no schema on the server')
      } finally {
        await server.stop()
      }
      assert.match(server.output(), /4 refused schemas/)
    })
  })

  /** A user's order whose price 0.1 becomes a float in protobuf: lossy, one value differs. */
  const lossyArgs = (out) => ['--payload', fixture('user-order.json'), '--proto', fixture('user-order.proto'), '--type', 'shop.Order', '-n', '20', '--trials', '2', '--start-warmup', '200ms', '--json', '--out', out]

  test('npm run compare --payload --allow-lossy: both formats on the user\'s document, the lossy one\'s differences reported', async () => {
    const out = temporaryDirectory('compare-custom')
    const run = await runScript('bin/compare.js', [...lossyArgs(out), '--allow-lossy'])
    assert.equal(run.code, 0, run.stderr)
    const results = JSON.parse(run.stdout)
    assert.deepEqual(results.rows.map((row) => row.test), ['custom (user-order.json)'])
    assert.deepEqual(results.reports.map((r) => `${r.format}/${r.trial}:${r.lossy?.differences ?? 0}`), ['json/1:0', 'protobuf/1:1', 'json/2:0', 'protobuf/2:1'])
    const plan = results.settings.batches['custom (user-order.json)']
    for (const report of results.reports) {
      const sent = 20 * (plan.closedPairs + plan.openPairs)
      assert.deepEqual(report.messages, { sent, acked: sent, errors: 0, lost: 0 }, report.format)
      // The server counts custom payloads under test "custom": its CPU and codec time are found by that name.
      assert.equal(report.server.messages, 20 * plan.openPairs)
      assert.ok(report.server.perMessageUs > 0)
      assert.ok(report.codec.serverUs > 0, `${report.format}: ${JSON.stringify(report.codec)}`)
    }
    assertOneLine(await runScript('bin/compare.js', ['--payload', fixture('geojson.json'), '--tests', '3']), /^give either --tests or --payload, not both$/)
  })

  test('npm run compare --payload: a lossy schema without --allow-lossy is refused, naming the format and file', async () => {
    const refused = await runScript('bin/compare.js', lossyArgs(temporaryDirectory('compare-custom')))
    assert.equal(refused.code, 2, 'refused before any server starts')
    assert.match(refused.stderr, /^the protobuf encoding is lossy for user-order\.json \(.+\); .*run anyway with --allow-lossy\n$/)
  })
})
