// Process-level: the package as a user gets it. `npm pack` builds the tarball (its generated
// protobuf.js code and help texts made by prepare), `npm install -g` puts it under a temporary
// prefix, and from another directory the installed commands run: the server, a protobuf client
// against it, a short compare, and the package's exports imported by name.
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { ROOT } from '../helpers.js'

const run = promisify(execFile)
const NAME = 'ws-json-vs-protobuf'
/**
 * The tarball's size the package must keep under: a guard against shipping tests, benchmarks or CI,
 * with room for the code's own growth (404 kB on 2026-11-28; 431 kB with the capacity command; 456 kB
 * with --out's lib/outputs and its OpenTelemetry exporter in npm-shrinkwrap.json).
 */
const MAX_TARBALL_BYTES = 480_000

describe('the npm package, packed, installed globally and run by name', { timeout: 170_000 }, () => {
  let work
  let command
  let elsewhere
  let tarball
  before(async () => {
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'package-'))
    await run('npm', ['pack', '--pack-destination', work, '--silent'], { cwd: ROOT, maxBuffer: 1 << 24 })
    tarball = path.join(work, fs.readdirSync(work).find((file) => file.endsWith('.tgz')))
    const prefix = path.join(work, 'prefix')
    // The npm cache npm ci filled serves what it can: the install fetches only what it lacks.
    await run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error', tarball],
      { cwd: work, maxBuffer: 1 << 24 })
    command = path.join(prefix, 'bin', NAME)
    elsewhere = fs.mkdtempSync(path.join(work, 'elsewhere-'))
  })
  after(() => fs.rmSync(work, { recursive: true, force: true }))

  test(`ships what users run, not the tests, benchmarks or CI, in under ${MAX_TARBALL_BYTES / 1000} kB`, async () => {
    assert.ok(fs.statSync(tarball).size <= MAX_TARBALL_BYTES, `${fs.statSync(tarball).size} bytes`)
    const { stdout } = await run('tar', ['-tzf', tarball], { maxBuffer: 1 << 24 })
    const files = stdout.split('\n').filter(Boolean).map((file) => file.replace(/^package\//, ''))
    for (const file of ['server.js', 'client_protobuf.js', 'bin/ws-json-vs-protobuf.js', 'proto/generated.js', 'lib/cli/help/server.txt', 'web/index.html', 'npm-shrinkwrap.json']) {
      assert.ok(files.includes(file), `${file} is in the tarball`)
    }
    assert.deepEqual(files.filter((file) => /^(test|bench|\.ci|docs\/results)\//.test(file)), [])
  })

  test('the install gets the versions the tests ran with (npm-shrinkwrap.json), but for the overridden native accelerators', () => {
    const { packages } = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm-shrinkwrap.json'), 'utf8'))
    const { overrides } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
    const installed = path.join(path.dirname(path.dirname(command)), 'lib', 'node_modules', NAME)
    // npm applies overrides only at a project's root: these two it resolves again (optional, native).
    const overridden = (name) => Object.keys(overrides).some((override) => name === override || name.startsWith(`@${override}/`))
    const differing = Object.entries(packages).filter(([where, { dev, optional }]) => where && !dev && !optional).flatMap(([where, { version }]) => {
      const name = where.replace(/^node_modules\//, '')
      if (overridden(name)) return []
      const actual = JSON.parse(fs.readFileSync(path.join(installed, where, 'package.json'), 'utf8')).version
      return actual === version ? [] : [`${name}: ${version} locked, ${actual} installed`]
    })
    assert.deepEqual(differing, [])
  })

  test('the installed command runs the server and a protobuf client from another directory; help names it', async (t) => {
    const server = spawn(command, ['server', '--port', '0'], { cwd: elsewhere })
    t.after(() => server.kill())
    const url = await new Promise((resolve, reject) => {
      let output = ''
      server.stdout.on('data', (chunk) => {
        output += chunk
        const match = /listening on (ws:\/\/\S+)/.exec(output)
        if (match) resolve(match[1])
      })
      server.once('exit', (code) => reject(new Error(`server exited with ${code}: ${output}`)))
    })
    const page = await fetch(url.replace(/^ws/, 'http'))
    assert.equal(page.status, 200, 'the browser client\'s page is served from the installed files')
    assert.match(await page.text(), /<html/i)
    const client = await run(command, ['client-protobuf', '3', '300', '--url', url, '--json'], { cwd: elsewhere })
    const report = JSON.parse(client.stdout)
    assert.deepEqual(report.messages, { sent: 300, acked: 300, errors: 0, lost: 0 })
    assert.equal(report.format, 'protobuf')
    const help = await run(command, ['client-protobuf', '--help'], { cwd: elsewhere })
    assert.match(help.stdout, new RegExp(`^Usage: ${NAME} client-protobuf <test>`))
    const unknown = await run(command, ['serve'], { cwd: elsewhere }).catch((err) => err)
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /^unknown command 'serve': expected one of compare, capacity, server, /)
  })

  test('npx runs it by name, from the tarball as from the registry', async () => {
    const { stdout } = await run('npx', ['--yes', '--prefer-offline', '--package', tarball, NAME, '--help'], { cwd: elsewhere })
    assert.match(stdout, new RegExp(`^Usage: ${NAME} <command>`))
    assert.match(stdout, /^ {2}compare {9}the main job/m)
  })

  test('a short compare runs from the installed package, with its reports where the user is', async () => {
    const { stdout } = await run(command, ['compare', '--tests', '5', '-n', '20', '--trials', '2', '--start-warmup', '200ms', '--out', 'report'], { cwd: elsewhere, maxBuffer: 1 << 24 })
    assert.match(stdout, /protobuf vs json/)
    const results = JSON.parse(fs.readFileSync(path.join(elsewhere, 'report', 'results.json'), 'utf8'))
    assert.equal(results.rows.length, 1)
  })

  test('its exports import by name: a codec and the reports\' merge', async () => {
    // A project with the package in its node_modules: the installed one, linked there.
    const project = fs.mkdtempSync(path.join(work, 'project-'))
    fs.mkdirSync(path.join(project, 'node_modules'))
    fs.symlinkSync(path.join(path.dirname(path.dirname(command)), 'lib', 'node_modules', NAME), path.join(project, 'node_modules', NAME))
    const code = `import { createCodec, resolveTest, loadPayload, mergeReports } from '${NAME}'\n` +
      'const test = resolveTest(\'3\'); const codec = await createCodec(\'protobuf\', test)\n' +
      'console.log(codec.encode(codec.prepare(loadPayload(test))).length, typeof mergeReports)'
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', code], { cwd: project })
    const [bytes, merge] = stdout.trim().split(' ')
    assert.ok(Number(bytes) > 100, stdout)
    assert.equal(merge, 'function')
  })
})
