// What is the Go reference server's own (servers/go/): its command line, compare --server go, and
// bench:servers beside Node. The wire protocol it keeps is tested in conformance.test.js, which
// runs against it by default. Skipped with the reason where go is not on PATH, but in CI, where that fails.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildGoServer } from '../../lib/server/go.js'
import { goUnavailable, runScript, startServerProcess } from '../helpers.js'

const unavailable = goUnavailable()

let server
before(async () => {
  if (unavailable) return
  server = await startServerProcess([], { command: buildGoServer() })
}, { timeout: 300_000 })
after(async () => { await server?.stop() })

test('go server, a bad option or a port already taken: one line on stderr and exit code 2', { skip: unavailable, timeout: 30_000 }, async () => {
  const command = buildGoServer()
  const taken = Number(new URL(server.url).port)
  for (const [args, message] of [
    [['--bogus'], /^wsbench-server: flag provided but not defined: -bogus \(--help lists the options\)\n$/],
    [['--handshake-timeout', 'soon'], /^wsbench-server: --handshake-timeout must be a duration such as 10s or 500ms, got 'soon'\n$/],
    [['--port', String(taken)], /^wsbench-server: cannot listen on 127\.0\.0\.1 port \d+: .*address already in use\n$/],
    [['--tls', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], /^--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both\n$/],
    [['--tls-key', 'k.pem'], /^--tls-cert and --tls-key go together: the certificate and its private key\n$/],
    [['--tls-cert', 'missing.pem', '--tls-key', 'k.pem'], /^--tls-cert missing\.pem: cannot read it \(ENOENT\)\n$/],
    [['--tls-cert', 'package.json', '--tls-key', 'package.json'], /^--tls-cert package\.json: not a PEM certificate\n$/]
  ]) {
    const run = spawnSync(command, args, { encoding: 'utf8', timeout: 10_000 })
    assert.equal(run.status, 2, `${args}: ${run.stderr}`)
    assert.equal(run.stdout, '')
    assert.match(run.stderr, message)
  }
})

test('npm run compare -- --server go --tls: json and protobuf compared over wss:// on two Go server processes, every message accounted for', { skip: goUnavailable() }, async () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'compare-go-'))
  try {
    const { code, stderr } = await runScript('bin/compare.js', ['--server', 'go', '--tls', '--tests', '5', '--trials', '2', '-n', '20', '--out', out])
    assert.equal(code, 0, stderr)
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
    assert.equal(results.settings.server, 'go')
    assert.equal(results.settings.servers, 2)
    assert.equal(results.settings.tls.version, 'TLSv1.3', 'the Go servers took the certificate compare made')
    for (const report of results.reports) {
      assert.equal(report.messages.sent, report.messages.acked, JSON.stringify(report.messages))
      assert.ok(report.server.perMessageUs > 0, 'its CPU read from the Go process itself')
      assert.ok(report.codec.serverUs > 0, 'its codec time from its /metrics')
    }
    const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8')
    assert.match(markdown, /2 server processes \(go\) and 2 client processes per row/)
    assert.match(markdown, /; over wss:\/\/ \(TLSv1\.3, TLS_AES_\d+_GCM_SHA\d+: wire bytes are TLS records\)/)
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
})

test('compare --server go refuses what the Go server cannot serve, in one line', { skip: goUnavailable() }, async () => {
  for (const [args, message] of [
    [['--formats', 'json,msgpack'], /^--server go serves json and protobuf, not msgpack$/m],
    [['--calibrate'], /^--calibrate plants its cost in a JavaScript codec the server loads: it runs on --server node$/m],
    [['--server-command', 'x'], /^give either --server or --server-command, not both$/m]
  ]) {
    const { code, stderr } = await runScript('bin/compare.js', ['--server', 'go', ...args])
    assert.equal(code, 2, stderr)
    assert.match(stderr, message)
  }
})

test('bench:servers: node and Go side by side in one run, msgs/s and server CPU per message for each test and format', { skip: goUnavailable() }, async () => {
  const { code, stdout, stderr } = await runScript('bench/servers.js', ['--tests', '5', '--messages', '300', '--rounds', '1', '--json'])
  assert.equal(code, 0, stderr)
  const { columns, rows, figures } = JSON.parse(stdout)
  assert.deepEqual(rows.map((row) => row.slice(0, 3).join(' ')), ['5 small json node', '5 small json go', '5 small protobuf node', '5 small protobuf go'])
  for (const row of rows) {
    assert.ok(row[columns.indexOf('msgs/s')] > 0, String(row))
    assert.ok(Number(row[columns.indexOf('server CPU µs/msg')]) > 0, String(row))
  }
  assert.match(figures['cpu-ratio-5-go'], /^\d+\.\d\dx$/)
})
