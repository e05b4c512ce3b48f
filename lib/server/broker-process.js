// The brokers a fan-out across processes goes through (redis-server, nats-server; lib/server/broker.js
// connects to them), started on this machine for tests and benchmarks.
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { endWithThisProcess } from '../processes.js'

/** Each broker's server program and the Debian package that has it. */
const BROKER_PROGRAMS = { redis: 'redis-server', nats: 'nats-server' }
/** Where a broker's program may be beside PATH: Debian puts nats-server in /usr/sbin, off a user's PATH. */
const SYSTEM_DIRS = ['/usr/local/sbin', '/usr/sbin', '/sbin']
/** Longest wait for a broker to say it is ready. */
const BROKER_START_TIMEOUT_MS = 10_000

/**
 * Where a broker's server program is, or null when it is not installed.
 * @param {'redis'|'nats'} kind
 * @returns {string|null}
 */
export function brokerProgram (kind) {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SYSTEM_DIRS]
  const found = dirs.map((dir) => path.join(dir, BROKER_PROGRAMS[kind])).find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  return found ?? null
}

/**
 * Starts a broker for the fan-out (redis-server or nats-server) on a free port, keeping nothing on
 * disk, and resolves once it is ready for clients. stop() ends it; so does the exit of this process.
 * @param {'redis'|'nats'} kind
 * @param {{host?: string}} [options]
 * @returns {Promise<{url: string, kind: string, process: import('node:child_process').ChildProcess, stop: () => Promise<void>}>}
 * @throws {Error} one line when the program is not installed, or when it exits or stays silent before it is ready
 */
export async function startBrokerProcess (kind, { host = '127.0.0.1' } = {}) {
  const program = brokerProgram(kind)
  if (!program) throw new Error(`${BROKER_PROGRAMS[kind]} not found: apt-get install ${BROKER_PROGRAMS[kind]}`)
  const port = await freePort(host)
  // nats-server's default max_payload, 1 MiB, is less than the large test payloads: raised to its
  // cap, 64 MiB, in a configuration file of its own, removed once it exits.
  const configDir = kind === 'nats' ? fs.mkdtempSync(path.join(os.tmpdir(), 'wsbench-nats-')) : null
  if (configDir) fs.writeFileSync(path.join(configDir, 'nats.conf'), 'max_payload: 64MB\n')
  const args = kind === 'redis'
    ? ['--port', String(port), '--bind', host, '--save', '', '--appendonly', 'no']
    : ['--addr', host, '--port', String(port), '--config', path.join(configDir, 'nats.conf')]
  const child = spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  endWithThisProcess(child, 'SIGKILL')
  const exited = new Promise((resolve) => {
    child.once('exit', resolve)
    child.once('error', () => resolve(null)) // could not be started after all
  })
  exited.then(() => {
    if (configDir) fs.rmSync(configDir, { recursive: true, force: true })
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  try {
    await brokerReady(child, kind, exited)
  } catch (err) {
    await stop()
    throw err
  }
  return { url: `${kind}://${host.includes(':') ? `[${host}]` : host}:${port}`, kind, process: child, stop }
}

/** Resolves once the broker logs that it is ready; rejects with one line if it exits or stays silent first. */
function brokerReady (child, kind, exited) {
  const ready = kind === 'redis' ? /Ready to accept connections/ : /Server is ready/
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${BROKER_PROGRAMS[kind]} not ready within ${BROKER_START_TIMEOUT_MS / 1000} s`)), BROKER_START_TIMEOUT_MS)
    const onData = (chunk) => {
      output += chunk
      if (!ready.test(output)) return
      clearTimeout(timer)
      // Drained, not read: a full pipe would block the broker's logging.
      child.stdout.removeListener('data', onData).resume()
      child.stderr.removeListener('data', onData).resume()
      resolve()
    }
    child.stdout.setEncoding('utf8').on('data', onData)
    child.stderr.setEncoding('utf8').on('data', onData)
    exited.then((code) => {
      clearTimeout(timer)
      const last = output.trim().split('\n').pop() ?? ''
      reject(new Error(`${BROKER_PROGRAMS[kind]} exited with ${code} before it was ready${last ? `: ${last}` : ''}`))
    })
  })
}

/**
 * A port free on `host` now (the kernel's pick for a listener that is then closed), for a program
 * that must be told its port: a broker, a Prometheus.
 * @param {string} host
 * @returns {Promise<number>}
 */
export function freePort (host) {
  return new Promise((resolve, reject) => {
    const probe = net.createServer()
    probe.once('error', reject)
    probe.listen(0, host, () => {
      const { port } = probe.address()
      probe.close(() => resolve(port))
    })
  })
}
