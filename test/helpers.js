// Shared by the tests: real processes, real sockets, real browsers, no mocks.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after } from 'node:test'
import WebSocket from 'ws'
import { CHROMIUM } from '../tools/headless-browser.js'
import { toolchainAvailable, referenceServer } from '../lib/reference/servers.js'
import { runNodeScript } from '../lib/processes.js'
import { brokerProgram } from '../lib/server/broker-process.js'
import { hostsUnavailableReason } from '../lib/network/hosts.js'
import { randomSource } from '../lib/compare/statistics.js'

export { PROJECT_ROOT as ROOT, runNodeScript as runScript, startServerProcess } from '../lib/processes.js'
export { CHROMIUM, openBrowserPage } from '../tools/headless-browser.js'

/**
 * A new directory under the system's temporary one, removed with everything in it when the test
 * file (or the suite it is made in) ends: tests leave nothing behind.
 * @param {string} prefix names what made it, for whoever finds one left by a killed run
 * @returns {string} its path
 */
export function temporaryDirectory (prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${prefix}-`))
  after(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * Why browser tests cannot run here, or false when they can. Outside CI a missing Chromium skips
 * them; in CI it fails them, so a broken install is never mistaken for a pass.
 * @returns {string|false}
 */
export function browserUnavailable () {
  if (fs.existsSync(CHROMIUM) || process.env.CI) return false
  return `no Chromium at ${CHROMIUM} (apt-get install chromium)`
}

/**
 * Why tests of a reference server (servers/NAME/) cannot run here, or false when they can: as with
 * Chromium, a missing toolchain (go, mvn) skips them outside CI and fails them in CI.
 * @param {string} name go, java, ...
 * @returns {string|false}
 */
export function referenceServerUnavailable (name) {
  if (toolchainAvailable(name) || process.env.CI) return false
  return `${referenceServer(name).toolchain.missing}, to build servers/${name}`
}

/**
 * Why tests of a broker (redis, nats) cannot run here, or false when they can: as with Chromium, a
 * missing program skips them outside CI and fails them in CI.
 * @param {'redis'|'nats'} kind
 * @returns {string|false}
 */
export function brokerUnavailable (kind) {
  if (brokerProgram(kind) || process.env.CI) return false
  return `no ${kind}-server here (apt-get install ${kind}-server)`
}

/**
 * Why the tests of test hosts (network namespaces) cannot run here, or false when they can: as
 * with Chromium, skipped outside CI, failed in CI.
 * @returns {Promise<string|false>}
 */
export async function hostsUnavailable () {
  return process.env.CI ? false : hostsUnavailableReason()
}

/**
 * Opens a raw ws connection and returns it with a queue of its replies as strings.
 * @param {string} url
 * @param {Record<string, string>} [headers]
 * @returns {Promise<{ws: WebSocket, nextReply: () => Promise<string>, closed: Promise<number>}>}
 */
export async function openConnection (url, headers = {}) {
  const ws = new WebSocket(url, { perMessageDeflate: false, headers })
  const replies = []
  const waiters = []
  ws.on('message', (data) => {
    const text = data.toString()
    const waiter = waiters.shift()
    if (waiter) waiter(text)
    else replies.push(text)
  })
  await new Promise((resolve, reject) => { ws.once('open', resolve); ws.once('error', reject) })
  const nextReply = () => replies.length ? Promise.resolve(replies.shift()) : new Promise((resolve) => waiters.push(resolve))
  const closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)))
  return { ws, nextReply, closed }
}

/**
 * Attempts an upgrade and returns the HTTP status, body and headers of the refusal.
 * @param {string} url
 * @param {Record<string, string>} [headers]
 * @param {object} [options] more of ws's client options (a wss:// server's `ca`)
 * @returns {Promise<{status: number, body: string, headers: object}>}
 */
export function refusedUpgrade (url, headers = {}, options = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, ...options })
    ws.once('open', () => reject(new Error('upgrade was accepted')))
    ws.once('error', () => {})
    ws.once('unexpected-response', (request, response) => {
      let body = ''
      response.setEncoding('utf8').on('data', (chunk) => { body += chunk })
      response.on('end', () => resolve({ status: response.statusCode, body, headers: response.headers }))
    })
  })
}

/**
 * Seeded standard normals for synthetic data with a known truth (the statistics' own generator,
 * with the test's own seed).
 * @param {number} seed
 * @returns {() => number}
 */
export function normalSource (seed) {
  const { normals } = randomSource(seed)
  const buffer = new Float64Array(1)
  return () => {
    normals(buffer)
    return buffer[0]
  }
}

/**
 * A TCP relay to a server that a test can cut: every connection through it is kept as its pair of
 * sockets, in the order they came, for the test to stall (unpipe) or cut (destroy).
 * @param {{host: string, port: number}} server
 * @returns {Promise<{url: string, pairs: Array<[import('node:net').Socket, import('node:net').Socket]>, close: () => void}>}
 */
export async function startRelay (server) {
  const pairs = []
  const relay = net.createServer((socket) => {
    const upstream = net.connect(server.port, server.host)
    socket.pipe(upstream).pipe(socket)
    for (const end of [socket, upstream]) end.on('error', () => { socket.destroy(); upstream.destroy() })
    pairs.push([socket, upstream])
  })
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve))
  return { url: `ws://127.0.0.1:${relay.address().port}`, pairs, close: () => relay.close() }
}

/**
 * Runs a script as on a machine without the programs it needs: nothing on PATH, and a temporary
 * directory of its own, to see what it leaves there.
 * @param {string} script
 * @param {string[]} [args]
 * @returns {Promise<{code: number, stdout: string, stderr: string, leftInTmp: string[]}>}
 */
export async function runWithoutPrograms (script, args = []) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'without-programs-'))
  try {
    const result = await runNodeScript(script, args, { env: { PATH: '/nonexistent', TMPDIR: tmp } })
    return { ...result, leftInTmp: fs.readdirSync(tmp) }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

/**
 * The --start-at contract, asserted so that no load can break it: every part measured from the
 * instant it was given and none before it, and merge's windows are exactly what the parts' own
 * starts and ends say. How late a busy machine starts them is a speed figure: bench:hosts reports
 * it ('start vs --start-at ms', the spread), a test cannot bound it.
 * @param {{startAt: number, startedAt: number, durationMs: number}[]} parts
 * @param {number} startAt epoch ms
 * @param {{startSpreadMs: number, overlapMs: number, overlapping: boolean}} windows merge's
 */
export function assertStartedTogether (parts, startAt, windows) {
  for (const part of parts) {
    assert.equal(part.startAt, startAt)
    assert.ok(part.startedAt >= startAt, `started ${startAt - part.startedAt} ms before --start-at`)
  }
  const starts = parts.map((p) => p.startedAt)
  const overlapMs = Math.round(Math.min(...parts.map((p) => p.startedAt + p.durationMs)) - Math.max(...starts))
  assert.deepEqual(windows, { startSpreadMs: Math.max(...starts) - Math.min(...starts), overlapMs: Math.max(0, overlapMs), overlapping: overlapMs > 0 })
}

/**
 * A thread of this process's scheduling policy as the kernel reports it (/proc's stat, field 41).
 * @param {number} tid
 * @returns {number} 0 normal, 1 SCHED_FIFO
 */
export function schedulingPolicy (tid) {
  const stat = fs.readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[38])
}
