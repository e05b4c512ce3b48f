// node server.js as a child process: its output, its exit codes.
import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import { createCodec } from '../../lib/codecs/registry.js'
import { loadPayload, resolveTest } from '../../lib/payloads/catalog.js'
import { ROOT, openConnection, refusedUpgrade, runScript, startServerProcess } from '../helpers.js'
import { watchOutput } from '../../lib/processes.js'
import { readMetrics } from '../../lib/server/metrics-reader.js'

describe('node server.js', () => {
  test('prints where it listens, and a final summary on SIGTERM', async () => {
    const server = await startServerProcess()
    assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+$/)
    const { ws, nextReply } = await openConnection(`${server.url}/?test=5&format=protobuf`)
    const codec = await createCodec('protobuf', resolveTest(5))
    ws.send(codec.encode(codec.prepare(loadPayload(resolveTest(5)))))
    assert.equal(await nextReply(), 'ACK')
    assert.equal(await server.stop('SIGTERM'), 0)
    assert.match(server.output(), /stopped on SIGTERM .* 1 messages, 0 decode errors/)
  })

  test('rejects a bad option with one line and exit code 2', async () => {
    const { code, stderr } = await runScript('server.js', ['--port', 'abc'])
    assert.equal(code, 2)
    assert.match(stderr, /^--port must be a whole number/)
    assert.equal(stderr.trim().split('\n').length, 1)
  })

  test('a taken port is one clear line, not a stack trace', async () => {
    const server = await startServerProcess()
    const { code, stderr } = await runScript('server.js', ['--port', new URL(server.url).port])
    await server.stop()
    assert.notEqual(code, 0)
    assert.match(stderr, /cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/)
    assert.equal(stderr.trim().split('\n').length, 1)
  })
  test('BENCH_TOKEN from the environment, and a warning when bound beyond loopback', async () => {
    const server = await startServerProcess(['--host', '0.0.0.0'], { env: { BENCH_TOKEN: 'from-env' } })
    try {
      assert.match(server.output(), /warning: listening on 0\.0\.0\.0: anyone who can reach it and has the token can connect/)
      const url = `ws://127.0.0.1:${new URL(server.url).port}/?test=5&format=json`
      assert.equal((await refusedUpgrade(url)).status, 401)
      const { ws, nextReply } = await openConnection(url, { Authorization: 'Bearer from-env' })
      ws.send('{"id":1,"status":"ok"}')
      assert.equal(await nextReply(), 'ACK')
      ws.close()
    } finally {
      await server.stop()
    }
    assert.match(server.output(), /1 messages, 0 decode errors, 0 protocol errors, 0 dropped connections, 0 refused upgrades, 1 unauthorized, 0 refused schemas, rss \d+ MB \(peak \d+ MB\)/)
  })
})

describe('node server.js past one process\'s open-file limit', () => {
  // The limit lowered for the server alone (lowering needs no privilege); Node starts with it.
  const FILES = 400
  const CONNECTIONS = 400
  const limitedServer = (args) => {
    const child = spawn('bash', ['-c', `ulimit -n ${FILES} && exec "$0" "$@"`, process.execPath, 'server.js', '--port', '0', ...args],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] })
    const output = watchOutput(child)
    return { child, output, url: output.printed(/listening on (ws:\S+)/).then((match) => match[1]) }
  }
  const clientRun = async (url, connections = CONNECTIONS) =>
    runScript('client_json.js', ['5', String(connections * 2), '--connections', String(connections), '--url', url])

  test('one process refuses past its limit with the reason, survives a burst, and still loads codecs', async () => {
    const server = limitedServer([])
    const url = await server.url
    // One at a time: every upgrade up to 128 files short of the limit is accepted, the next refused.
    const held = []
    for (let i = 0; i < FILES - 128; i++) held.push(await openConnection(`${url}/?test=5&format=json`))
    const refusal = await refusedUpgrade(`${url}/?test=5&format=json`)
    assert.equal(refusal.status, 503)
    assert.equal(refusal.body, 'open-file limit reached: at most 272 connections with 400 files per process; run more server processes (--processes)\n')
    for (const { ws } of held) ws.close()
    await Promise.all(held.map(({ closed }) => closed))
    // All at once: what does not fit is refused or dropped unaccepted; the run fails, the server does not.
    const burst = await clientRun(url)
    assert.equal(burst.code, 1)
    assert.match(burst.stderr, /^error: (cannot connect to ws:\S+: ECONNRESET|server refused .*: 503 open-file limit reached)/)
    // The reserve kept files for a codec never loaded before.
    const protobuf = await runScript('client_protobuf.js', ['5', '100', '--connections', '10', '--url', url])
    assert.equal(protobuf.code, 0, protobuf.stderr)
    server.child.kill('SIGTERM')
    const { code, stdout } = await server.output.exited
    assert.equal(code, 0)
    const [, dropped, refused] = /(\d+) dropped connections, (\d+) refused upgrades/.exec(stdout).map(Number)
    assert.ok(refused >= 1 && dropped + refused > 1, stdout)
  })

  test('--processes 2: each process its own limit, so all connections are served; lines summed; no process left', async () => {
    const server = limitedServer(['--processes', '2'])
    const url = await server.url
    // More than one process takes (272), few enough that the kernel's split between the two
    // (they accept from one socket, never evenly) fits: 400 once came out past 272 to one.
    const connections = 300
    const run = await clientRun(url, connections)
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stdout, new RegExp(`sent ${(connections * 2).toLocaleString('en-US')} {2}acked ${(connections * 2).toLocaleString('en-US')} {2}errors 0 {2}lost 0`))
    const workers = execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number)
    assert.equal(workers.length, 2)
    server.child.kill('SIGTERM')
    const { code, stdout } = await server.output.exited
    assert.equal(code, 0)
    assert.match(stdout, /listening on ws:\S+ \(rss \d+ MB, 2 worker processes\)/)
    assert.match(stdout, new RegExp(`stopped on SIGTERM after [\\d.]+ s: ${connections} connections served, ${(connections * 2).toLocaleString('en-US')} messages, ` +
      '0 decode errors, 0 protocol errors, 0 dropped connections, 0 refused upgrades, .* summed over 3 processes'))
    for (const pid of workers) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`)
  })

  test('a worker that dies stops the server: one line on stderr, the final line, exit 1', async () => {
    const server = limitedServer(['--processes', '2'])
    await server.url
    const [victim] = execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number)
    process.kill(victim, 'SIGKILL')
    const { code, stdout, stderr } = await server.output.exited
    assert.equal(code, 1)
    assert.equal(stderr, `error: server process ${victim} exited with SIGKILL; stopping the others\n`)
    assert.match(stdout, /stopped by a failure after [\d.]+ s: 0 connections served/)
  })

  test('a primary that is killed takes its workers with it (node:cluster ends them): their connections drop', async () => {
    const server = limitedServer(['--processes', '2'])
    const url = await server.url
    const workers = execFileSync('pgrep', ['-P', String(server.child.pid)], { encoding: 'utf8' }).trim().split('\n').map(Number)
    const connections = await Promise.all(Array.from({ length: 4 }, () => openConnection(`${url}/?test=5&format=json`)))
    server.child.kill('SIGKILL')
    assert.deepEqual(await Promise.all(connections.map(({ closed }) => closed)), [1006, 1006, 1006, 1006])
    // tail --pid returns once a process that is not our child has exited.
    for (const pid of workers) execFileSync('tail', ['--pid', String(pid), '-s', '0.05', '-f', '/dev/null'], { timeout: 10_000 })
    for (const pid of workers) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`)
  })
})

test('churn: after 5,000 short connections (open, one message, close) the server holds no more files than before, and counted every one', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
  const server = await startServerProcess()
  const codec = await createCodec('protobuf', resolveTest(5))
  const frame = codec.encode(codec.prepare(loadPayload(resolveTest(5))))
  const files = () => fs.readdirSync(`/proc/${server.child.pid}/fd`).length
  const short = async () => {
    const { ws, nextReply, closed } = await openConnection(`${server.url}/?test=5&format=protobuf`)
    ws.send(frame)
    assert.equal(await nextReply(), 'ACK')
    ws.close()
    await closed
  }
  try {
    await short() // the first connection loads what the server keeps for good (codecs, the test's messages)
    const baseline = files()
    for (let round = 0; round < 25; round++) await Promise.all(Array.from({ length: 200 }, short))
    // Once the server has seen every connection close (its own count), its files are what they were.
    const open = async () => (await readMetrics(server.url)).value('wsbench_open_connections')
    for (let tries = 0; await open() > 0 && tries < 500; tries++);
    assert.equal(await open(), 0)
    const after = files()
    assert.ok(after <= baseline + 20, `${after} files open after the churn, ${baseline} before`)
  } finally {
    assert.equal(await server.stop('SIGTERM'), 0)
  }
  assert.match(server.output(), /stopped on SIGTERM after [\d.]+ s: 5001 connections served, 5,001 messages,/)
})
