// What every reference server's own test file (go-server.test.js, java-server.test.js) checks, with
// the server named: its bad options, compare --server NAME over TLS, compare's refusals, and
// bench:servers beside Node. The wire protocol they keep is conformance.test.js's.
import { after, before } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { buildReferenceServer, referenceServer } from '../../lib/reference/servers.js'
import { runScript, startServerProcess } from '../helpers.js'

/**
 * One server of this name for the test file, started before its tests (built first when its
 * sources changed) and stopped after them; nothing where it is unavailable.
 * @param {string} name
 * @param {string|false} unavailable why it cannot run here
 * @returns {{server?: Awaited<ReturnType<typeof startServerProcess>>}} its `server` once started
 */
export function sharedServer (name, unavailable) {
  const shared = {}
  before(async () => {
    if (!unavailable) shared.server = await startServerProcess([], { command: buildReferenceServer(name) })
  }, { timeout: 600_000 })
  after(async () => { await shared.server?.stop() })
  return shared
}

/**
 * Runs the server with each bad command line: exit code 2, nothing on stdout, the one line expected on stderr.
 * @param {string} name
 * @param {Array<[string[], RegExp]>} cases
 */
export function assertBadOptions (name, cases) {
  const command = buildReferenceServer(name)
  for (const [args, message] of cases) {
    const run = spawnSync(command, args, { encoding: 'utf8', timeout: 20_000 })
    assert.equal(run.status, 2, `${args}: ${run.stderr}`)
    assert.equal(run.stdout, '')
    assert.match(run.stderr, message)
  }
}

/**
 * The bad options every server words alike: the TLS pair and its files (docs/protocol.md, "TLS").
 * @returns {Array<[string[], RegExp]>}
 */
export const TLS_OPTION_CASES = [
  [['--tls', '--tls-cert', 'c.pem', '--tls-key', 'k.pem'], /^--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both\n$/],
  [['--tls-key', 'k.pem'], /^--tls-cert and --tls-key go together: the certificate and its private key\n$/],
  [['--tls-cert', 'missing.pem', '--tls-key', 'k.pem'], /^--tls-cert missing\.pem: cannot read it \(ENOENT\)\n$/],
  [['--tls-cert', 'package.json', '--tls-key', 'package.json'], /^--tls-cert package\.json: not a PEM certificate\n$/]
]

/**
 * npm run compare -- --server NAME --tls on test 5: every message accounted for, the server's CPU
 * read from its own process and its codec time from its /metrics.
 * @param {string} name
 */
export async function assertCompareOnServer (name) {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), `compare-${name}-`))
  try {
    const { code, stderr } = await runScript('bin/compare.js', ['--server', name, '--tls', '--tests', '5', '--trials', '2', '-n', '20', '--start-warmup', '100ms', '--out', out])
    assert.equal(code, 0, stderr)
    const results = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
    assert.equal(results.settings.server, name)
    assert.equal(results.settings.servers, 2)
    // --start-warmup in place of the server's own start, its warm-up generations kept.
    assert.equal(results.settings.startWarmupMs, 100)
    assert.equal(results.settings.warmupGenerations, referenceServer(name).warmup?.generations ?? null)
    assert.equal(results.settings.tls.version, 'TLSv1.3', `the ${name} servers took the certificate compare made`)
    for (const report of results.reports) {
      assert.equal(report.messages.sent, report.messages.acked, JSON.stringify(report.messages))
      assert.ok(report.server.perMessageUs > 0, `its CPU read from the ${name} process itself`)
      assert.ok(report.codec.serverUs > 0, 'its codec time from its /metrics')
    }
    const markdown = fs.readFileSync(path.join(out, 'results.md'), 'utf8')
    assert.match(markdown, new RegExp(`2 server processes \\(${name}\\) and 2 client processes per row`))
    assert.match(markdown, /; over wss:\/\/ \(TLSv1\.3, TLS_AES_\d+_GCM_SHA\d+: wire bytes are TLS records\)/)
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
}

/**
 * compare --server NAME refuses, in one line, a format the server does not serve and the options only node's server takes.
 * @param {string} name
 */
export async function assertCompareRefusals (name) {
  const { formats } = referenceServer(name)
  // Each refused before anything starts: all at once.
  await Promise.all([
    [['--formats', 'json,msgpack'], new RegExp(`^--server ${name} serves ${formats.join(' and ')}, not msgpack$`, 'm')],
    [['--calibrate'], /^--calibrate plants its cost in a JavaScript codec the server loads: it runs on --server node$/m],
    [['--server-command', 'x'], /^give either --server or --server-command, not both$/m]
  ].map(async ([args, message]) => {
    const { code, stderr } = await runScript('bin/compare.js', ['--server', name, ...args])
    assert.equal(code, 2, stderr)
    assert.match(stderr, message)
  }))
}

/**
 * bench:servers with these servers in one run: msgs/s and server CPU per message for each, test 5, both formats.
 * @param {string[]} servers
 */
export async function assertBenchServers (servers) {
  const { code, stdout, stderr } = await runScript('bench/servers.js', ['--servers', servers.join(','), '--tests', '5', '--messages', '300', '--rounds', '1', '--start-warmup', '100ms', '--json'])
  assert.equal(code, 0, stderr)
  const { columns, rows, figures, notes } = JSON.parse(stdout)
  assert.deepEqual(rows.map((row) => row.slice(0, 3).join(' ')), ['json', 'protobuf'].flatMap((format) => servers.map((server) => `5 small ${format} ${server}`)))
  for (const row of rows) {
    assert.ok(row[columns.indexOf('msgs/s')] > 0, String(row))
    assert.ok(Number(row[columns.indexOf('server CPU µs/msg')]) > 0, String(row))
  }
  for (const server of servers) assert.match(figures[`cpu-ratio-5-${server}`], /^\d+\.\d\dx$/)
  assert.match(notes[0], new RegExp(`after a warm-up client run of ${servers.map((server) => `0\\.1 s for ${server}`).join(', ')}`), 'the --start-warmup given')
}
