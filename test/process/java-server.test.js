// What is the Java reference server's own (servers/java/): its command line, its build (cached,
// offline once the Maven repository has everything), --json-library's Gson against Jackson,
// compare --server java (with --server-args), and bench:servers beside Node and Go. The wire
// protocol it keeps is tested by conformance.test.js with WSBENCH_SERVER=java (CI runs it; with
// WSBENCH_SERVER="java --json-library gson" for Gson). Skipped with the reason where mvn is not on PATH, but in CI, where that fails.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { watchOutput } from '../../lib/processes.js'
import { buildReferenceServer, referenceServer } from '../../lib/reference/servers.js'
import { ROOT, openConnection, referenceServerUnavailable, runScript, startServerProcess } from '../helpers.js'
import { TLS_OPTION_CASES, assertBadOptions, assertBenchServers, assertCompareOnServer, assertCompareRefusals, sharedServer } from './reference-server.js'

const unavailable = referenceServerUnavailable('java')
const shared = sharedServer('java', unavailable)

/** Messages of each test's stream that each JSON library echoes: enough for every shape of value, in seconds. */
const ECHOED = 300
/**
 * Frames Jackson and Gson must answer alike on medium and person: the same reply, or each an error
 * line (their reasons are worded differently). Go's encoding/json and protobuf's JSON types agree;
 * an enum may be its number. (They differ where JSON has one kind of number or says nothing: `1.0`
 * for an int, which Gson reads as 1, and 2^63 for an int64, which it rounds to 2^63-1; a duplicate
 * key, which Jackson refuses and Gson, as Go, takes the last of; 1e400, which Jackson reads as Infinity.)
 */
const TYPED_FRAMES = {
  medium: ['', ' ', 'null', '{}', '[]', '"a string"', '5', '{not json', '{"orderId":5}', '{"orderId":true}', '{"orderId":{}}', '{"orderId":"x"} {}',
    '{"items":[{"quantity":"5"}]}', '{"items":[{"quantity":1.5}]}', '{"items":[{"quantity":99999999999}]}',
    '{"items":[{"quantity":-2147483648}]}', '{"items":[{"quantity":null}]}', '{"customer":{"vip":1}}', '{"customer":{"vip":"true"}}',
    '{"gift":false,"priority":0}', '{"createdAt":9223372036854775807}', '{"createdAt":"2020"}',
    '{"total":"1.5"}', '{"total":NaN}', '{"total":true}', '{"total":1}', '{"total":-0.0}', '{"total":12345678901234567890}',
    '{"tags":[null]}', '{"tags":["a",1]}', '{"tags":"a"}', '{"items":{}}', '{"customer":""}', '{"unknown":{"a":[1,2]}}',
    "{'orderId':'x'}", '{orderId:"x"}', '{"orderId":"x",}', '/*c*/{}', '{"orderId":"<>&=\\u0001\\n\\u00e9\\""}'],
  person: ['1', '3', '-1', '1.0', '"HOME"', '"FAX"', '"home"', 'null', 'true'].map((type) => `{"name":"a","id":1,"phones":[{"number":"1","type":${type}}]}`)
}

/** Jackson 2.23 writes a character beyond the BMP as its surrogate pair's escapes, Gson (as the clients) as UTF-8: the same JSON string. */
const surrogatesJoined = (text) => text.replace(/\\u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})/gi,
  (_, high, low) => String.fromCharCode(Number.parseInt(high, 16), Number.parseInt(low, 16)))

/** The replies of servers to the same frame sent to each, in turn, on connections of theirs. */
async function repliesOf (connections, frame) {
  const replies = []
  for (const { ws, nextReply } of connections) {
    ws.send(frame)
    replies.push(await nextReply())
  }
  return replies
}

describe('java server', () => {
  test('java server, the build: nothing done while no source is newer; a whole build again without the network (mvn --offline)', { skip: unavailable, timeout: 300_000 }, async () => {
    const { dir, build } = referenceServer('java')
    const jar = path.join(dir, build.output)
    const before = fs.statSync(jar).mtimeMs
    buildReferenceServer('java')
    assert.equal(fs.statSync(jar).mtimeMs, before, 'nothing rebuilt while no source is newer')
    // A fresh copy of the folder (its target/ aside) beside the project's proto/ and node_modules,
    // so that the jar the running server reads is left alone: every plugin and dependency comes
    // from the local Maven repository the first build filled.
    const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'java-offline-'))
    try {
      fs.cpSync(dir, path.join(copy, 'servers', 'java'), { recursive: true, filter: (file) => !file.startsWith(path.join(dir, 'target')) })
      for (const link of ['proto', 'node_modules']) fs.symlinkSync(path.join(ROOT, link), path.join(copy, link))
      // Not spawnSync: the other tests' processes go on being read meanwhile.
      const offline = await watchOutput(spawn('mvn', ['--batch-mode', '--quiet', '--offline', 'package'], { cwd: path.join(copy, 'servers', 'java') })).exited
      assert.equal(offline.code, 0, `${offline.stdout}${offline.stderr}`)
      assert.ok(fs.existsSync(path.join(copy, 'servers', 'java', build.output)))
    } finally {
      fs.rmSync(copy, { recursive: true, force: true })
    }
  })

  test('--json-library gson and gson-per-call: every test\'s stream echoed as the same JSON as Jackson\'s, and malformed or mistyped JSON refused alike',
    { skip: unavailable, timeout: 120_000 }, async (t) => {
      const gson = await Promise.all(['gson', 'gson-per-call'].map((library) =>
        startServerProcess(['--json-library', library], { command: buildReferenceServer('java') })))
      t.after(() => Promise.all(gson.map((server) => server.stop())))
      const servers = [shared.server, ...gson]
      const connect = (test) => Promise.all(servers.map((server) => openConnection(`${server.url}/?test=${test}&format=json&direction=echo`)))
      for (const test of ['numbers', 'strings', 'medium', 'large', 'small', 'person', 'counters']) {
        const lines = zlib.gunzipSync(fs.readFileSync(path.join(ROOT, 'fixtures', 'streams', `${test}.jsonl.gz`))).toString().split('\n').filter(Boolean)
        const connections = await connect(test)
        for (const line of lines.slice(0, ECHOED)) {
          const [jackson, ...others] = await repliesOf(connections, line)
          assert.doesNotMatch(jackson, /^ERR/, `${test}: ${jackson}`)
          for (const other of others) assert.equal(other, surrogatesJoined(jackson), `${test}: ${line}`)
        }
        for (const { ws } of connections) ws.close()
      }
      for (const [test, frames] of Object.entries(TYPED_FRAMES)) {
        const connections = await connect(test)
        for (const frame of frames) {
          const [jackson, ...others] = await repliesOf(connections, frame)
          for (const other of others) {
            if (jackson.startsWith('ERR')) assert.match(other, new RegExp(`^ERR json decode failed for test ${test}: `), `${test} ${frame}: Jackson said ${jackson}`)
            else assert.equal(other, jackson, `${test} ${frame}`)
          }
        }
        for (const { ws } of connections) ws.close()
      }
    })

  test('compare --server java --server-args=\'--json-library gson\': each server process started with them, recorded in the results and their command line; a bad one is one line, exit code 2',
    { skip: unavailable, timeout: 120_000 }, async (t) => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), 'compare-java-gson-'))
      t.after(() => fs.rmSync(out, { recursive: true, force: true }))
      const run = (serverArgs) => runScript('bin/compare.js', ['--server', 'java', `--server-args=${serverArgs}`, '--tests', 'person', '--direction', 'echo',
        '--trials', '2', '-n', '20', '--start-warmup', '100ms', '--out', path.join(out, 'report')])
      const [ran, refused] = await Promise.all([run('--json-library gson'), run('--json-library xml')])
      assert.equal(refused.code, 2, refused.stderr)
      assert.equal(refused.stderr, 'the server refused to start: wsbench-server: --json-library must be one of jackson, gson, gson-per-call, got \'xml\'\n')
      assert.equal(ran.code, 0, ran.stderr)
      const results = JSON.parse(fs.readFileSync(path.join(out, 'report', 'results.json'), 'utf8'))
      assert.equal(results.settings.server, 'java')
      assert.deepEqual(results.settings.serverArgs, ['--json-library', 'gson'])
      for (const report of results.reports) {
        assert.equal(report.messages.sent, report.messages.acked, JSON.stringify(report.messages))
        assert.ok(report.codec.serverUs > 0, 'the Gson servers\' codec time, from their /metrics')
      }
      assert.match(fs.readFileSync(path.join(out, 'report', 'results.md'), 'utf8'), /2 server processes \(java --json-library gson\) and 2 client processes per row/)
      fs.mkdirSync(path.join(out, 'docs', 'results'), { recursive: true })
      const recorded = await runScript('tools/docs-results.js', ['--root', out, '--from-compare', path.join(out, 'report', 'results.json'), '--name', 'gson'])
      assert.equal(recorded.code, 0, recorded.stderr)
      assert.equal(JSON.parse(fs.readFileSync(path.join(out, 'docs', 'results', 'gson.json'), 'utf8')).command,
        'npm run compare -- --tests person --trials 2 --direction echo --server java --server-args=\'--json-library gson\' -n 20')
    })

  test('npm run compare -- --server java --tls: json and protobuf compared over wss:// on two Java server processes, every message accounted for',
    { skip: unavailable, timeout: 180_000 }, () => assertCompareOnServer('java'))

  test('compare --server java refuses what the Java server cannot serve, in one line', { skip: unavailable }, () => assertCompareRefusals('java'))

  test('bench:servers: node, Go and Java side by side in one run, msgs/s and server CPU per message for each test and format',
    { skip: unavailable || referenceServerUnavailable('go'), timeout: 180_000 }, () => assertBenchServers(['node', 'go', 'java']))

  // Last: its runs are spawnSync's, which would hold the tests after it back from starting.
  test('java server, its ready line names it; a bad option or a port already taken: one line on stderr and exit code 2', { skip: unavailable, timeout: 60_000 }, () => {
    assert.match(shared.server.output(), /^listening on ws:\/\/127\.0\.0\.1:\d+ \(java server, root \S+\)$/m)
    assertBadOptions('java', [
      [['--bogus'], /^wsbench-server: unknown option --bogus \(--help lists the options\)\n$/],
      [['--handshake-timeout', 'soon'], /^wsbench-server: --handshake-timeout must be a duration such as 10s or 500ms, got 'soon'\n$/],
      [['--max-connections', '0'], /^wsbench-server: --max-connections must be a whole number from 1 to 2147483647, got '0'\n$/],
      [['--json-library', 'xml'], /^wsbench-server: --json-library must be one of jackson, gson, gson-per-call, got 'xml'\n$/],
      [['--port', new URL(shared.server.url).port], /^wsbench-server: cannot listen on 127\.0\.0\.1 port \d+: .*[Aa]ddress already in use\n$/],
      ...TLS_OPTION_CASES
    ])
  })
})
