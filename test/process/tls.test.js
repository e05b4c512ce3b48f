// wss end to end, as processes: node server.js serving TLS (a throwaway certificate, two worker
// processes, a token), both clients trusting it with --ca; and every bad input one line, exit 2.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runScript, startServerProcess } from '../helpers.js'
import { throwawayCertificate } from '../../lib/server/tls.js'

test('both clients over wss:// to a --tls server of two processes, with its certificate as --ca and the token: every message acked, TLS named in the report', async () => {
  const server = await startServerProcess(['--tls', '--processes', '2'], { env: { BENCH_TOKEN: 's3cret' } })
  try {
    assert.match(server.url, /^wss:\/\/127\.0\.0\.1:\d+$/)
    const [, file] = server.output().match(/throwaway certificate (\S+) \(SHA-256 ([0-9A-F:]{95})\): clients trust it with --ca \1, or skip the check with --insecure/) ?? []
    assert.ok(file && fs.existsSync(file), server.output())
    for (const script of ['client_json.js', 'client_protobuf.js']) {
      const { code, stdout, stderr } = await runScript(script, ['3', '400', '--url', server.url, '--ca', file, '--connections', '4', '--json'], { env: { BENCH_TOKEN: 's3cret' } })
      assert.equal(code, 0, stderr)
      const report = JSON.parse(stdout)
      assert.deepEqual(report.messages, { sent: 400, acked: 400, errors: 0, lost: 0 }, script)
      assert.deepEqual(report.tls, { version: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' })
      // On the socket: the encrypted stream, more than the frames it carries.
      assert.ok(report.bytes.written > 400 * (report.bytes.payloadPerMessage + 6 + 21), `${report.bytes.written} bytes written`)
    }
    // Without the certificate, or without the token: one line saying why, no stack.
    const untrusted = await runScript('client_json.js', ['3', '10', '--url', server.url], { env: { BENCH_TOKEN: 's3cret' } })
    assert.notEqual(untrusted.code, 0)
    assert.match(untrusted.stderr, /^error: cannot connect to wss:\/\/127\.0\.0\.1:\d+: the server's certificate is not trusted \(DEPTH_ZERO_SELF_SIGNED_CERT: .*\): give its certificate or CA with --ca FILE, or skip the check with --insecure\n$/)
    const plain = await runScript('client_json.js', ['3', '10', '--url', server.url.replace('wss:', 'ws:')], { env: { BENCH_TOKEN: 's3cret' } })
    assert.notEqual(plain.code, 0)
    assert.match(plain.stderr, /^error: server refused ws:\/\/127\.0\.0\.1:\d+\/\?test=medium&format=json: 400 this port speaks TLS: connect with wss:\/\/ \(or https:\/\/\)\n$/)
    assert.equal(await server.stop('SIGTERM'), 0)
    assert.ok(!fs.existsSync(file), 'the throwaway certificate is removed with the server')
    assert.match(server.output(), /stopped on SIGTERM .* 800 messages/)
  } finally {
    await server.stop()
  }
})

test('fan-out over wss:// across two server processes (--broker ipc), the certificate trusted through NODE_EXTRA_CA_CERTS: every publish delivered to every subscriber', async () => {
  const server = await startServerProcess(['--tls', '--processes', '2', '--broker', 'ipc'])
  try {
    const file = server.output().match(/throwaway certificate (\S+) /)[1]
    const { code, stdout, stderr } = await runScript('client_protobuf.js', ['3', '--direction', 'fanout', '--connections', '6', '--rate', '50', '--duration', '1s',
      '--url', server.url, '--json'], { env: { NODE_EXTRA_CA_CERTS: file } })
    assert.equal(code, 0, stderr)
    const report = JSON.parse(stdout)
    assert.equal(report.tls.version, 'TLSv1.3')
    assert.ok(report.fanout.published >= 40, JSON.stringify(report.fanout))
    assert.deepEqual(report.messages, { sent: report.fanout.published, acked: report.fanout.published, errors: 0, lost: 0 })
    assert.equal(report.fanout.delivered, report.fanout.published * 6, 'every subscriber got every publish')
  } finally {
    await server.stop()
  }
})

test('bad TLS options: one line, exit 2, nothing listening', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tls-process-'))
  try {
    const [one, two] = await Promise.all([throwawayCertificate(), throwawayCertificate()])
    const write = (name, text) => { fs.writeFileSync(path.join(dir, name), text); return path.join(dir, name) }
    const cert = write('cert.pem', one.cert)
    const otherKey = write('other.key', two.key)
    for (const [args, message] of [
      [['--tls-cert', path.join(dir, 'missing.pem'), '--tls-key', otherKey], /^--tls-cert .*missing\.pem: cannot read it \(ENOENT\)$/],
      [['--tls-cert', cert, '--tls-key', otherKey], /^--tls-key .*other\.key does not match the certificate in --tls-cert .*cert\.pem$/],
      [['--tls', '--tls-cert', cert, '--tls-key', otherKey], /^--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both$/],
      [['--tls-cert', cert], /^--tls-cert and --tls-key go together/]
    ]) {
      const { code, stdout, stderr } = await runScript('server.js', ['--port', '0', ...args])
      assert.equal(code, 2, args.join(' '))
      assert.match(stderr.trim(), message)
      assert.equal(stderr.trim().split('\n').length, 1)
      assert.equal(stdout, '', 'nothing listened')
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})
