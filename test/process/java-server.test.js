// What is the Java reference server's own (servers/java/): its command line, its build (cached,
// offline once the Maven repository has everything), compare --server java, and bench:servers
// beside Node and Go. The wire protocol it keeps is tested by conformance.test.js with
// WSBENCH_SERVER=java (CI runs it). Skipped with the reason where mvn is not on PATH, but in CI, where that fails.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { watchOutput } from '../../lib/processes.js'
import { buildReferenceServer, referenceServer } from '../../lib/server/reference.js'
import { ROOT, referenceServerUnavailable } from '../helpers.js'
import { TLS_OPTION_CASES, assertBadOptions, assertBenchServers, assertCompareOnServer, assertCompareRefusals, sharedServer } from './reference-server.js'

const unavailable = referenceServerUnavailable('java')
const shared = sharedServer('java', unavailable)

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
      [['--port', new URL(shared.server.url).port], /^wsbench-server: cannot listen on 127\.0\.0\.1 port \d+: .*[Aa]ddress already in use\n$/],
      ...TLS_OPTION_CASES
    ])
  })
})
