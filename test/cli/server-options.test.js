import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { X509Certificate } from 'node:crypto'
import { UsageError } from '../../lib/errors.js'
import { throwawayCertificate } from '../../lib/server/tls.js'
import { parseServerArgs } from '../../lib/cli/server-options.js'

// Never pass --help here: yargs answers it with process.exit.
const server = (args, env = {}) => parseServerArgs(['node', 'server.js', ...args], env)

const usage = (message) => (err) => {
  assert.ok(err instanceof UsageError, `expected a UsageError, got ${err?.name}: ${err?.message}`)
  assert.equal(err.message, message)
  return true
}

test('defaults: loopback on 7070, 64 MiB messages, 10,000 connections, 1 MiB schemas, 10 s handshakes, one process, no token, no broker', async () => {
  assert.deepEqual(await server([]), {
    host: '127.0.0.1',
    port: 7070,
    maxPayload: 64 * 1024 * 1024,
    maxConnections: 10_000,
    maxSchemaBytes: 1024 * 1024,
    handshakeTimeoutMs: 10_000,
    stall: undefined,
    compress: false,
    maxBuffered: 1024 * 1024,
    replay: 0,
    processes: 1,
    token: undefined,
    broker: undefined,
    tags: {},
    tls: undefined,
    codecModules: []
  })
})

test('--tag labels /metrics as the clients label what they stream; a bad one is refused', async () => {
  assert.deepEqual((await server(['--tag', 'testid=run-42', '--tag', 'team=x'])).tags, { testid: 'run-42', team: 'x' })
  await assert.rejects(server(['--tag', 'format=json']), /'format' is a label of its own/)
})

test('TLS: --tls-cert and --tls-key read and checked before anything listens, --tls makes a throwaway certificate for the host too; mixed or half given, one line', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'server-options-'))
  try {
    const certificate = await throwawayCertificate()
    fs.writeFileSync(path.join(dir, 'cert.pem'), certificate.cert)
    fs.writeFileSync(path.join(dir, 'key.pem'), certificate.key)
    const given = (await server(['--tls-cert', path.join(dir, 'cert.pem'), '--tls-key', path.join(dir, 'key.pem')])).tls
    assert.deepEqual(given, { ...certificate, throwaway: false })
    const throwaway = (await server(['--tls', '--host', '10.9.8.7'])).tls
    assert.equal(throwaway.throwaway, true)
    assert.match(new X509Certificate(throwaway.cert).subjectAltName, /IP Address:10\.9\.8\.7/)
    await assert.rejects(server(['--tls', '--tls-cert', 'cert.pem']), usage('--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both'))
    await assert.rejects(server(['--tls-cert', 'cert.pem']), usage('--tls-cert and --tls-key go together: the certificate and its private key'))
    await assert.rejects(server(['--tls-key', 'key.pem']), usage('--tls-cert and --tls-key go together: the certificate and its private key'))
    await assert.rejects(server(['--tls-cert', path.join(dir, 'none.pem'), '--tls-key', path.join(dir, 'key.pem')]), /cannot read it \(ENOENT\)/)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('--replay: publishes kept per topic, 0 or more', async () => {
  assert.equal((await server(['--replay', '100'])).replay, 100)
  await assert.rejects(server(['--replay', '-1']), /^UsageError: --replay must be a whole number >= 0, got '-1'$/)
})

test('--broker: redis://, nats:// or ipc, passed on as given; anything else, or ipc in one process, one UsageError line', async () => {
  assert.equal((await server(['--broker', 'redis://127.0.0.1:6379'])).broker, 'redis://127.0.0.1:6379')
  assert.equal((await server(['--broker', 'nats://bench-broker'])).broker, 'nats://bench-broker')
  assert.equal((await server(['--broker', 'ipc', '--processes', '2'])).broker, 'ipc')
  await assert.rejects(server(['--broker', 'kafka://127.0.0.1:9092']),
    usage("--broker: unknown broker 'kafka://127.0.0.1:9092': expected redis://HOST:PORT, nats://HOST:PORT or ipc"))
  await assert.rejects(server(['--broker', '']), usage("--broker: unknown broker '': expected redis://HOST:PORT, nats://HOST:PORT or ipc"))
  await assert.rejects(server(['--broker', 'ipc']), usage('--broker ipc relays between worker processes: it needs --processes 2 or more'))
})

test('PORT and BENCH_TOKEN come from the environment passed in, the command line wins', async () => {
  const fromEnv = await server([], { PORT: '8080', BENCH_TOKEN: 's3cret' })
  assert.equal(fromEnv.port, 8080)
  assert.equal(fromEnv.token, 's3cret')
  const given = await server(['--port', '9090', '--token', 'other'], { PORT: '8080', BENCH_TOKEN: 's3cret' })
  assert.equal(given.port, 9090)
  assert.equal(given.token, 'other')
})

test('an empty token means none', async () => {
  assert.equal((await server([], { BENCH_TOKEN: '' })).token, undefined)
  assert.equal((await server(['--token', ''])).token, undefined)
})

test('--port 0 picks a free port; -p is its alias; --host and --compress are passed on', async () => {
  assert.equal((await server(['--port', '0'])).port, 0)
  assert.equal((await server(['-p', '7171'])).port, 7171)
  const options = await server(['--host', '0.0.0.0', '--compress'])
  assert.equal(options.host, '0.0.0.0')
  assert.equal(options.compress, true)
})

test('a bad port is one UsageError line, from the command line or from PORT', async () => {
  await assert.rejects(server(['--port', 'abc']), usage("--port must be a whole number >= 0, got 'abc'"))
  await assert.rejects(server(['--port', '-1']), usage("--port must be a whole number >= 0, got '-1'"))
  await assert.rejects(server(['--port', '65536']), usage('--port must be at most 65535, got 65536'))
  await assert.rejects(server([], { PORT: 'http' }), usage("--port must be a whole number >= 0, got 'http'"))
  assert.equal((await server(['--port', '65535'])).port, 65535)
})

test('--stall MS@N blocks once for MS after N messages', async () => {
  assert.deepEqual((await server(['--stall', '300@500'])).stall, { ms: 300, after: 500 })
  assert.deepEqual((await server(['--stall', '0@1'])).stall, { ms: 0, after: 1 })
  for (const text of ['300', '300@0', '300@', '@500', 'a@b', '1.5@2']) {
    await assert.rejects(server(['--stall', text]), usage(`--stall must be MS@MESSAGES, e.g. 300@500, got '${text}'`))
  }
})

test('limits: --max-payload and --max-connections >= 1, --max-schema-bytes >= 0 (0 refuses registrations)', async () => {
  const options = await server(['--max-payload', '1024', '--max-connections', '2', '--max-schema-bytes', '0'])
  assert.equal(options.maxPayload, 1024)
  assert.equal(options.maxConnections, 2)
  assert.equal(options.maxSchemaBytes, 0)
  await assert.rejects(server(['--max-payload', '0']), usage("--max-payload must be a whole number >= 1, got '0'"))
  await assert.rejects(server(['--max-connections', '0']), usage("--max-connections must be a whole number >= 1, got '0'"))
  await assert.rejects(server(['--max-schema-bytes', '-1']), usage("--max-schema-bytes must be a whole number >= 0, got '-1'"))
  await assert.rejects(server(['--max-payload', '1MB']), usage("--max-payload must be a whole number >= 1, got '1MB'"))
})

test('--processes: up to 256 worker processes', async () => {
  assert.equal((await server(['--processes', '4'])).processes, 4)
  await assert.rejects(server(['--processes', '0']), usage("--processes must be a whole number >= 1, got '0'"))
  await assert.rejects(server(['--processes', '257']), usage('--processes must be at most 256, got 257'))
  await assert.rejects(server(['--processes', 'two']), usage("--processes must be a whole number >= 1, got 'two'"))
})

test('unknown options are refused', async () => {
  await assert.rejects(server(['--prot', '80']), usage('Unknown argument: prot (see --help)'))
})

test('--handshake-timeout takes a duration; anything else is one UsageError line', async () => {
  assert.equal((await server(['--handshake-timeout', '500ms'])).handshakeTimeoutMs, 500)
  assert.equal((await server(['--handshake-timeout', '30'])).handshakeTimeoutMs, 30_000)
  await assert.rejects(server(['--handshake-timeout', 'soon']), usage("--handshake-timeout must be a duration such as 30s, 500ms or 2m, got 'soon'"))
})
