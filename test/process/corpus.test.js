// Your own traffic end to end: generated corpora (a feed with several kinds of message, an
// ID-keyed catalog, a chat with optional and null fields, big integers and unicode) through pbjson,
// node server.js and both clients; the inferred schemas loaded by three protobuf toolchains.
import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import protobuf from 'protobufjs'
import { writeCorpora, feedMessages } from '../../data/corpora.js'
import { runScript, startServerProcess, temporaryDirectory } from '../helpers.js'

const dir = temporaryDirectory('corpus-e2e')
const corpora = writeCorpora(dir)

/** Debian's python3 with python3-protobuf (CI installs it); elsewhere the Python check is skipped, in CI it fails. */
const PYTHON = '/usr/bin/python3'
const pythonMissing = () => {
  if (process.env.CI) return false
  const probe = spawnSync(PYTHON, ['-c', 'import google.protobuf'], { encoding: 'utf8' })
  return probe.status === 0 ? false : `no ${PYTHON} with google.protobuf (apt-get install python3-protobuf)`
}
const protocMissing = () => process.env.CI || spawnSync('protoc', ['--version']).status === 0 ? false : 'no protoc (apt-get install protobuf-compiler)'

async function inferred (name) {
  const run = await runScript('bin/pbjson.js', ['infer', corpora[name]])
  assert.equal(run.code, 0, run.stderr)
  const file = path.join(dir, `${name}.proto`)
  fs.writeFileSync(file, run.stdout)
  return { file, proto: run.stdout, stderr: run.stderr }
}

describe('pbjson over corpora', () => {
  test('infer reads every message, says what it saw, and writes one portable, lossless schema', async () => {
    const feed = await inferred('feed')
    assert.equal(feed.stderr, 'read 200 of 200 messages from feed.jsonl; kinds by type: ticker 50, book 50, trade 50, heartbeat 50; maps: none; unions: none\n')
    assert.match(feed.proto, /^message Payload \{\n {2}optional string type = 1;\n {2}optional string symbol = 2;\n {2}optional double price = 3;/m, 'the union of every kind\'s fields')
    const catalog = await inferred('catalog')
    assert.match(catalog.proto, /^ {2}map<string, string> area_names = 1 \[json_name = "areaNames"\];$/m, 'ID-keyed objects are maps')
    assert.match(catalog.proto, /^ {2}map<string, Event> events = 2;$/m, 'named by the singular of their key')
    assert.doesNotMatch(catalog.proto, /Object1385/, 'no message per ID')
    const chat = await inferred('chat')
    assert.match(chat.stderr, /kinds by event: message 30, typing 30, presence 30, reaction 30; maps: none; unions: Int64OrNull, StringOrNull/)
    assert.match(chat.proto, /optional int64 id = 2;/, 'IDs past 2^53 as int64')
    for (const proto of [feed.proto, catalog.proto, chat.proto]) {
      assert.doesNotMatch(proto, /descriptor\.proto|option \(/, 'nothing that needs descriptor.proto or a custom option')
    }
    for (const name of ['feed', 'catalog', 'chat']) {
      const check = await runScript('bin/pbjson.js', ['check', corpora[name], '--proto', path.join(dir, `${name}.proto`)])
      assert.equal(check.stdout, 'lossless\n', `${name}: ${check.stderr}`)
      assert.equal(check.code, 0)
    }
  })

  test('the inferred schemas load unchanged in stock protobuf.js', async () => {
    for (const name of ['feed', 'catalog', 'chat']) {
      const { file } = await inferred(name)
      const root = protobuf.loadSync(file)
      assert.ok(root.lookupType('pbjson.Payload').fieldsArray.length > 0, name)
    }
  })

  test('and in protoc', { skip: protocMissing() }, async () => {
    for (const name of ['feed', 'catalog', 'chat']) {
      const { file } = await inferred(name)
      const run = spawnSync('protoc', [`--proto_path=${dir}`, '--proto_path=/usr/include', `--descriptor_set_out=${file}.pb`, file], { encoding: 'utf8' })
      assert.equal(run.status, 0, `${name}: ${run.stderr}`)
    }
  })

  test('and in Google\'s Python runtime, through protoc --python_out', { skip: pythonMissing() || protocMissing() }, async () => {
    for (const name of ['feed', 'catalog', 'chat']) {
      const { file } = await inferred(name)
      const made = spawnSync('protoc', [`--proto_path=${dir}`, '--proto_path=/usr/include', `--python_out=${dir}`, file], { encoding: 'utf8' })
      assert.equal(made.status, 0, made.stderr)
      const loaded = spawnSync(PYTHON, ['-c', `import ${name}_pb2 as m; print(sorted(m.Payload.DESCRIPTOR.fields_by_name)[0])`], { cwd: dir, encoding: 'utf8' })
      assert.equal(loaded.status, 0, `${name}: ${loaded.stderr}`)
    }
  })

  test('a schema inferred from a sample names the held-out messages it would change, by line and path', async () => {
    // Inferred from the first 12: whole volumes, four kinds. Line 13 has a fractional volume, line 14 a new kind with a new key.
    const lines = feedMessages(12).map((message) => JSON.stringify(message))
    lines.push(JSON.stringify({ type: 'ticker', symbol: 'BTC-USD', price: 43000.5, volume: 1.5, ts: 1 }))
    lines.push(JSON.stringify({ type: 'halt', reason: 'circuit breaker' }))
    const file = path.join(dir, 'held-out.jsonl')
    fs.writeFileSync(file, lines.join('\n') + '\n')
    const sample = await runScript('bin/pbjson.js', ['infer', file, '--sample', '12'])
    assert.equal(sample.code, 0, sample.stderr)
    assert.match(sample.stderr, /^read 12 of 14 messages from held-out\.jsonl; kinds by type: ticker 3, book 3, trade 3, heartbeat 3;/)
    const proto = path.join(dir, 'held-out.proto')
    fs.writeFileSync(proto, sample.stdout)
    const check = await runScript('bin/pbjson.js', ['check', file, '--proto', proto])
    assert.equal(check.code, 1)
    assert.equal(check.stdout, 'lossy: 2 differences in 2 of 14 messages\n' +
      '  line 13: $.volume: expected 1.5, actual 1\n' +
      '  line 14: $.reason: expected "circuit breaker", actual (absent)\n')
  })
})

describe('a corpus through node server.js and both clients', () => {
  let server
  before(async () => { server = await startServerProcess() })
  after(() => server.stop())

  for (const name of ['feed', 'chat', 'catalog', 'directory']) {
    test(`${name}: every message acknowledged in JSON and in protobuf, sizes per message as a distribution`, async () => {
      const count = name === 'catalog' ? 20 : 500
      const reports = []
      for (const format of ['json', 'protobuf']) {
        const run = await runScript(`client_${format}.js`, ['--payload', corpora[name], String(count), '-i', '4', '--url', server.url, '--json'])
        assert.equal(run.code, 0, run.stderr)
        reports.push(JSON.parse(run.stdout))
      }
      for (const report of reports) {
        assert.deepEqual(report.messages, { sent: count, acked: count, errors: 0, lost: 0 }, report.format)
        assert.equal(report.test, 'custom')
        assert.equal(report.lossy, null)
        assert.equal(report.payloadFile, path.basename(corpora[name]))
        const sizes = report.bytes.payloadSizes
        assert.ok(sizes.min <= sizes.p50 && sizes.p50 <= sizes.p99 && sizes.p99 <= sizes.max, JSON.stringify(sizes))
        assert.equal(report.bytes.payloadPerMessage, sizes.mean)
      }
      const [json, proto] = reports
      assert.equal(json.corpus.messages, proto.bytes.payloadSizes.messages)
      assert.ok(proto.bytes.payloadSizes.mean < json.bytes.payloadSizes.mean, 'protobuf is smaller on this traffic')
    })
  }

  test('echo: the server decodes each message and sends it back; the client decodes every reply', async () => {
    for (const format of ['json', 'protobuf']) {
      const run = await runScript(`client_${format}.js`, ['--payload', corpora.chat, '240', '--direction', 'echo', '--url', server.url, '--json'])
      assert.equal(run.code, 0, run.stderr)
      assert.deepEqual(JSON.parse(run.stdout).messages, { sent: 240, acked: 240, errors: 0, lost: 0 })
    }
  })

  test('a corpus the schema cannot carry is refused with the line, and runs with --allow-lossy', async () => {
    const proto = path.join(dir, 'feed-narrow.proto')
    fs.writeFileSync(proto, 'syntax = "proto3";\nmessage Tick { optional string type = 1; optional string symbol = 2; optional float price = 3; optional int32 volume = 4; optional int64 ts = 5; }\n')
    const args = ['--payload', corpora.feed, '40', '--proto', proto, '--type', 'Tick', '--url', server.url]
    const refused = await runScript('client_protobuf.js', args)
    assert.equal(refused.code, 2)
    // Ticker and heartbeat messages fit (43000.25 is exact in a float); book and trade messages lose their own keys.
    assert.match(refused.stderr, /^ {2}line 2: \$\.bids: expected \[\[2300\.5,1\.2\],\[2300\.25,0\.4\]\], actual \(absent\)$/m)
    assert.match(refused.stderr, /^ {2}line 3: \$\.size: expected 0\.01, actual \(absent\)$/m)
    assert.match(refused.stderr, /\nthe protobuf encoding is lossy for feed\.jsonl \(300 values differ in 100 of 200 messages\); fix the schema, or run anyway with --allow-lossy\n$/)
    const lossy = await runScript('client_protobuf.js', [...args, '--allow-lossy', '--json'])
    assert.equal(lossy.code, 0, lossy.stderr)
    assert.equal(JSON.parse(lossy.stdout).lossy.messages, 100)
  })

  test('bad corpora: one line, exit 2, before any connection', async () => {
    const broken = path.join(dir, 'broken.jsonl')
    fs.writeFileSync(broken, '{"type":"a"}\n{"type":\n')
    const run = await runScript('client_json.js', ['--payload', broken, '10', '--url', 'ws://127.0.0.1:1'])
    assert.equal(run.code, 2)
    assert.equal(run.stderr, 'broken.jsonl: invalid JSON at line 2, column 9: unexpected end of input\n')
  })
})
