// `npm run server:NAME` as a new user runs it: from a copy of the project with no build output, the
// first run builds the reference server (its build's output on stderr, stdout left to the program's
// path), execs it, and it serves. And a machine without the toolchain gets one line naming what to
// install, from the script and from compare --server NAME alike.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { REFERENCE_SERVERS } from '../../lib/reference/servers.js'
import { ROOT, openConnection, referenceServerUnavailable, startServerProcess, temporaryDirectory } from '../helpers.js'

/**
 * A copy of the project as a clean clone has it: no server's build output, node_modules linked.
 * @returns {string} its root
 */
function cleanCopy () {
  const root = temporaryDirectory('server-scripts')
  const left = new Set([...REFERENCE_SERVERS.map((server) => path.dirname(path.join(server.dir, server.build.output))),
    path.join(ROOT, '.git'), path.join(ROOT, 'node_modules')])
  fs.cpSync(ROOT, root, { recursive: true, filter: (source) => !left.has(source) })
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'))
  return root
}

/** A PATH with node alone on it: no go, mvn or javac. */
function nodeOnlyPath () {
  const dir = temporaryDirectory('node-only')
  fs.symlinkSync(process.execPath, path.join(dir, 'node'))
  return dir
}

for (const server of REFERENCE_SERVERS) {
  const { name } = server
  const unavailable = referenceServerUnavailable(name)

  test(`npm run server:${name} from a clean clone: builds, serves on its first run, stops with 1001`, { skip: unavailable, timeout: 600_000 }, async () => {
    const root = cleanCopy()
    const built = path.join(root, 'servers', name, server.build.output)
    assert.ok(!fs.existsSync(built), 'no build output to begin with')
    const started = await startServerProcess([], { command: 'npm', args: ['run', '--silent', `server:${name}`, '--', '--port', '0'], root })
    try {
      assert.ok(fs.existsSync(built), 'built by its first run')
      const { ws, nextReply, closed } = await openConnection(`${started.url}/?test=small&format=json`)
      ws.send(fs.readFileSync(path.join(ROOT, 'data', '5-small.json'), 'utf8'))
      assert.equal(await nextReply(), 'ACK')
      await started.stop()
      assert.equal(await closed, 1001, 'npm passes SIGTERM on to the server it became')
    } finally {
      await started.stop()
    }
  })

  test(`no ${name} toolchain: one line naming what to install, from the script and from compare --server ${name}`, { timeout: 60_000 }, () => {
    const root = cleanCopy()
    const env = { ...process.env, PATH: nodeOnlyPath() }
    const script = spawnSync(process.execPath, ['bin/reference-server.js', name], { cwd: root, env, encoding: 'utf8' })
    assert.equal(script.status, 2)
    assert.equal(script.stdout, '')
    assert.equal(script.stderr, `cannot build the ${name} server: ${server.toolchain.missing}\n`)
    const compare = spawnSync(process.execPath, ['bin/compare.js', '--server', name, '--tests', 'small'], { cwd: root, env, encoding: 'utf8' })
    assert.equal(compare.status, 2)
    assert.equal(compare.stderr, `--server ${name}: cannot build the ${name} server: ${server.toolchain.missing}\n`)
  })
}
