import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import WebSocket from 'ws'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import {
  PROJECT_ROOT, cpuPinning, forkNodeScript, openFileLimit, pinProcess, runNodeScript, startServerProcess, watchOutput
} from '../lib/processes.js'
import { temporaryDirectory } from './helpers.js'

// Resolves once an upgrade is answered: open, or the HTTP status it was refused with.
function upgrade (url, headers = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers })
    ws.once('open', () => { ws.close(); resolve('open') })
    ws.once('unexpected-response', (request, response) => { response.resume(); resolve(response.statusCode) })
    ws.once('error', (err) => { if (err.message.startsWith('Unexpected server response')) return; reject(err) })
  })
}

test('PROJECT_ROOT is the directory of the entry points', () => {
  assert.ok(path.isAbsolute(PROJECT_ROOT))
  for (const script of ['server.js', 'client_json.js', 'package.json']) assert.ok(fs.existsSync(path.join(PROJECT_ROOT, script)), script)
})

describe('runNodeScript', () => {
  test('runs a project script to completion from the project root and collects its exit code and output', async () => {
    const { code, signal, stdout, stderr } = await runNodeScript('server.js', ['--port', 'abc'])
    assert.equal(code, 2)
    assert.equal(signal, null)
    assert.equal(stdout, '')
    assert.equal(stderr, "--port must be a whole number >= 0, got 'abc'\n")
  })

  test('adds the environment variables given to the parent\'s', async () => {
    const { code, stderr } = await runNodeScript('server.js', [], { env: { PORT: 'http' } })
    assert.equal(code, 2)
    assert.equal(stderr, "--port must be a whole number >= 0, got 'http'\n")
  })

  test('a script that does not exist: node\'s own error, exit 1', async () => {
    const { code, stderr } = await runNodeScript('no-such-script.js', [])
    assert.equal(code, 1)
    assert.match(stderr, /Cannot find module '.*no-such-script\.js'/)
  })

  test('root: runs the script of another copy of the project, from there', async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'other-copy-'))
    t.after(() => fs.rmSync(root, { recursive: true, force: true }))
    fs.writeFileSync(path.join(root, 'server.js'), 'console.log(process.cwd())\n')
    const { code, stdout } = await runNodeScript('server.js', [], { root })
    assert.equal(code, 0)
    assert.equal(stdout, `${fs.realpathSync(root)}\n`)
  })
})

describe('startServerProcess', () => {
  test('starts node server.js on a free port, resolves once it accepts connections, and stop() ends it', async () => {
    const server = await startServerProcess()
    try {
      assert.match(server.url, /^ws:\/\/127\.0\.0\.1:\d+$/)
      assert.notEqual(server.url, 'ws://127.0.0.1:0')
      assert.equal(await upgrade(`${server.url}/?test=5&format=json`), 'open')
      assert.match(server.output(), /listening on ws:\/\/127\.0\.0\.1:\d+/)
    } finally {
      const code = await server.stop()
      assert.equal(code, 0, 'server.js closes cleanly on SIGTERM')
    }
    assert.notEqual(server.child.exitCode, null)
    assert.match(server.output(), /stopped on SIGTERM after/)
    assert.equal(await server.stop(), 0, 'stopping again returns the same code')
  })

  test('passes extra arguments and environment variables', async () => {
    const server = await startServerProcess(['--max-connections', '1'], { env: { BENCH_TOKEN: 's3cret' } })
    const auth = { Authorization: 'Bearer s3cret' }
    try {
      assert.equal(await upgrade(`${server.url}/?test=5&format=json`), 401)
      // One connection held open: the second is over --max-connections 1.
      const held = new WebSocket(`${server.url}/?test=5&format=json`, { headers: auth })
      await new Promise((resolve, reject) => { held.once('open', resolve); held.once('error', reject) })
      assert.equal(await upgrade(`${server.url}/?test=5&format=json`, auth), 503)
      held.close()
    } finally {
      await server.stop()
    }
  })

  test('rejects with the output of a script that exits before listening', async () => {
    await assert.rejects(startServerProcess([], { args: ['--port', 'abc'] }),
      { message: "server.js exited with 2 before listening: --port must be a whole number >= 0, got 'abc'\n" })
  })
})

describe('a server started here ends with the process that started it', () => {
  // A script that starts a server, prints its pid, and waits; with `teardown`, it has a SIGTERM listener of its own.
  const starter = (teardown) => spawn(process.execPath, ['--input-type=module', '-e', `
    import { startServerProcess } from ${JSON.stringify(path.join(PROJECT_ROOT, 'lib/processes.js'))}
    const server = await startServerProcess()
    ${teardown ? "process.once('SIGTERM', () => { console.log('tearing down'); setImmediate(() => process.exit(0)) })" : ''}
    console.log('server', server.child.pid)
    setInterval(() => {}, 1000)
  `], { stdio: ['ignore', 'pipe', 'pipe'] })
  const gone = async (pid) => {
    // It stops itself on the SIGTERM it was sent: wait for that, boundedly.
    for (let waited = 0; fs.existsSync(`/proc/${pid}`) && waited < 10_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20))
    return !fs.existsSync(`/proc/${pid}`)
  }

  for (const teardown of [false, true]) {
    test(teardown ? 'on SIGTERM, with a listener of its own: the server is ended, and the listener still runs and decides the exit' : 'on SIGTERM: the server is ended, and the process exits 143', { skip: process.platform !== 'linux' && 'reads /proc' }, async () => {
      const child = starter(teardown)
      const output = watchOutput(child)
      const [, pid] = await output.printed(/^server (\d+)$/m)
      child.kill('SIGTERM')
      const { code, stdout, stderr } = await output.exited
      assert.equal(code, teardown ? 0 : 143, stderr)
      assert.equal(stdout.includes('tearing down'), teardown)
      assert.ok(await gone(Number(pid)), `server ${pid} still running`)
    })
  }
})

test('watchOutput: printed() resolves on the first match of stdout, rejects when the child exits without it; exited has it all', async () => {
  const child = spawn(process.execPath, ['-e', 'console.log("ready on 42"); console.error("note"); setTimeout(() => console.log("bye"), 50)'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const output = watchOutput(child)
  const [, port] = await output.printed(/ready on (\d+)/)
  assert.equal(port, '42')
  await assert.rejects(output.printed(/never/), /exited before printing \/never\//)
  assert.deepEqual(await output.exited, { code: 0, stdout: 'ready on 42\nbye\n', stderr: 'note\n' })
})

test('cpuPinning: the first two CPUs this process may use, server then clients; a pinned child runs there', { skip: cpuPinning() ? false : 'taskset or a second CPU is missing here' }, async () => {
  const dir = temporaryDirectory('status')
  const status = (list) => {
    const file = path.join(dir, `status-${list}`)
    fs.writeFileSync(file, `Name:\tnode\nCpus_allowed:\tff\nCpus_allowed_list:\t${list}\nvoluntary_ctxt_switches:\t1\n`)
    return file
  }
  assert.deepEqual(cpuPinning(status('0-3')), { server: '0', clients: '1' })
  assert.deepEqual(cpuPinning(status('2,5-7')), { server: '2', clients: '5' })
  assert.equal(cpuPinning(status('3')), null, 'one CPU: nothing to pin apart')
  assert.equal(cpuPinning(path.join(dir, 'missing')), null)
  // A child started on one CPU sees only that CPU.
  const { clients } = cpuPinning()
  const { stdout } = await runNodeScript('-e', ["process.stdout.write(require('fs').readFileSync('/proc/self/status', 'utf8').match(/Cpus_allowed_list:\\s*(\\S+)/)[1])"], { cpus: clients })
  assert.equal(stdout, clients)
})

test('forkNodeScript: a project script with an IPC channel and the environment given, on the CPUs given; pinProcess moves every thread', { skip: cpuPinning() ? false : 'taskset or a second CPU is missing here' }, async () => {
  const { server, clients } = cpuPinning()
  const ask = async (child, message) => {
    child.send(message)
    const [answer] = await once(child, 'message')
    return answer
  }
  const child = forkNodeScript('test/fixtures/ipc-affinity.js', { env: { WSBENCH_TEST_VALUE: 'given' } })
  const exited = once(child, 'exit')
  try {
    assert.equal(child.stdout, null, 'stdout is not piped')
    assert.ok(child.stderr, 'stderr is, for the parent to read')
    const first = await ask(child, { variable: 'WSBENCH_TEST_VALUE' })
    assert.equal(first.value, 'given')
    // Moved, every thread of it, while it runs.
    assert.equal(pinProcess(child.pid, clients), true)
    assert.deepEqual(await ask(child, { variable: 'NOTHING_SET_HERE' }), { value: null, process: clients, threads: [clients] })
    assert.equal(pinProcess(child.pid, server), true)
    assert.deepEqual((await ask(child, { variable: 'x' })).threads, [server])
  } finally {
    child.disconnect()
  }
  assert.deepEqual(await exited, [0, null], 'it exits once its channel closes')

  // Started on CPUs of its own (taskset): the IPC channel still reaches it.
  const pinned = forkNodeScript('test/fixtures/ipc-affinity.js', { cpus: clients })
  try {
    assert.deepEqual(await ask(pinned, { variable: 'x' }), { value: null, process: clients, threads: [clients] })
  } finally {
    pinned.disconnect()
    await once(pinned, 'exit')
  }
})

test('pinProcess: a process that does not exist cannot be moved: false', {
  skip: cpuPinning() ? false : 'taskset or a second CPU is missing here'
}, () => {
  // Above the kernel's pid_max (at most 2^22): never a process.
  assert.equal(pinProcess(2 ** 22 + 1, cpuPinning().clients), false)
})

test('openFileLimit: the open-file limit of this process, or of a child started with a lower one; Infinity where unknown', async () => {
  const own = openFileLimit()
  assert.ok(Number.isInteger(own) && own > 0, `${own}`)
  const child = spawn('bash', ['-c', 'ulimit -n 321 && exec "$0" -e "$1"', process.execPath,
    `import(${JSON.stringify(path.join(PROJECT_ROOT, 'lib/processes.js'))}).then((m) => console.log(m.openFileLimit()))`],
  { stdio: ['ignore', 'pipe', 'pipe'] })
  const { code, stdout } = await watchOutput(child).exited
  assert.equal(code, 0)
  assert.equal(stdout, '321\n')
  assert.equal(openFileLimit(path.join(PROJECT_ROOT, 'no-such-limits-file')), Infinity)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-'))
  try {
    const unlimited = path.join(dir, 'limits')
    fs.writeFileSync(unlimited, 'Limit                     Soft Limit           Hard Limit           Units     \nMax open files            unlimited            unlimited            files     \n')
    assert.equal(openFileLimit(unlimited), Infinity)
  } finally {
    fs.rmSync(dir, { recursive: true })
  }
})
