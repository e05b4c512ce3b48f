// Process-level: --codec-module on the real server (one process and --processes 2), the real
// clients (one thread and --workers 2), compare and pbjson, with a text and a binary module as
// fixtures, and modules that fail in every way a user's module can.
import { test, describe, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { refusedUpgrade, runScript, startServerProcess } from '../helpers.js'

const TEXT = 'test/fixtures/codecs/json-envelope.js'
const BINARY = 'test/fixtures/codecs/pbjs-reflect.js'
const MODULES = ['--codec-module', TEXT, '--codec-module', BINARY]
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'codec-module-'))
after(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** A module file of its own for one test. */
function moduleFile (name, text) {
  const file = path.join(scratch, name)
  fs.writeFileSync(file, text)
  return file
}

/** Runs a client with --json and returns its report, checking every message is accounted for. */
async function clientReport (script, args) {
  const run = await runScript(script, [...args, '--json'])
  const report = JSON.parse(run.stdout)
  const { sent, acked, errors, lost } = report.messages
  assert.equal(sent, acked + errors + lost)
  return { ...run, report }
}

/** Asserts one line on stderr and exit 2, nothing on stdout, no stack trace. */
function assertRefused ({ code, stdout, stderr }, pattern, what) {
  assert.equal(code, 2, `${what}: ${stderr}`)
  assert.match(stderr.trimEnd(), pattern, what)
  assert.equal(stderr.trim().split('\n').length, 1, `${what}: one line`)
  assert.doesNotMatch(stderr, /\n\s+at /)
  assert.equal(stdout, '', what)
}

describe('--codec-module', () => {
  describe('a server and clients given the same modules', () => {
    let server
    test('the server lists them, and serves both the text and the binary one, up, echo and down', async () => {
      server = await startServerProcess(MODULES)
      // Each client on connections of its own: all at once.
      await Promise.all(['json-envelope', 'pbjs-reflect'].flatMap((format) => ['up', 'echo', 'down'].map(async (direction) => {
        const { code, report } = await clientReport('client.js', [...MODULES, '--format', format, '3', '200', '--url', server.url, '--direction', direction])
        assert.equal(code, 0, `${format} ${direction}`)
        assert.equal(report.format, format)
        assert.equal(report.codecModule, path.resolve(format === 'json-envelope' ? TEXT : BINARY), 'the report names the module')
        assert.deepEqual(report.messages, { sent: 200, acked: 200, errors: 0, lost: 0 }, `${format} ${direction}`)
      })))
    })

    test('--workers 2: each thread adds the module', async () => {
      const { code, report } = await clientReport('client.js', [...MODULES, '--format', 'pbjs-reflect', 'person', '400', '--url', server.url, '--workers', '2'])
      assert.equal(code, 0)
      assert.equal(report.workers, 2)
      assert.equal(report.codecModule, path.resolve(BINARY), 'the merged report names the module')
      assert.deepEqual(report.messages, { sent: 400, acked: 400, errors: 0, lost: 0 })
    })

    test('client_json.js and client_protobuf.js take --codec-module too, and a user\'s payload goes through a module that carries one', async () => {
      const [{ code, report }, json, human] = await Promise.all([
        clientReport('client.js', [...MODULES, '--format', 'json-envelope', '--payload', 'test/fixtures/infer/geojson.json', '50', '--url', server.url]),
        clientReport('client_json.js', ['--codec-module', TEXT, '5', '20', '--url', server.url]),
        runScript('client.js', ['--codec-module', TEXT, '--format', 'json-envelope', '5', '20', '--url', server.url])
      ])
      assert.equal(code, 0)
      assert.deepEqual(report.messages, { sent: 50, acked: 50, errors: 0, lost: 0 })
      assert.deepEqual([json.report.format, json.report.codecModule], ['json', null])
      assert.match(human.stdout, new RegExp(`^json-envelope \\(${path.resolve(TEXT).replace(/[.]/g, '\\.')}\\) · test 5 small · up`))
    })

    test('a module that cannot carry a user\'s payload is refused before anything connects', async () => {
      const run = await runScript('client.js', [...MODULES, '--format', 'pbjs-reflect', '--payload', 'test/fixtures/infer/geojson.json', '5', '--url', server.url])
      assertRefused(run, /^format 'pbjs-reflect' does not carry a payload of your own: it works from a built-in test's schema$/, 'payload')
    })

    test('a client whose module the server was not given: the 400 says the format is unknown and how to add it', async () => {
      const other = moduleFile('other.js', 'export const format = "other"\nexport const binary = false\nexport const codecFor = () => ({ prepare: (x) => x, encode: JSON.stringify, decode: (f) => JSON.parse(f), toPlain: (x) => x })\n')
      const run = await runScript('client.js', ['--codec-module', other, '--format', 'other', '3', '5', '--url', server.url])
      assert.equal(run.code, 1)
      assert.match(run.stderr, /400 unknown format 'other': expected one of avro, .*json-envelope, pbjs-reflect, or add it with --codec-module <file\.js>/)
      const refusal = await refusedUpgrade(`${server.url}/?test=3&format=other`)
      assert.equal(refusal.status, 400)
      const stopped = await server.stop()
      assert.equal(stopped, 0)
    })
  })

  test('a codec whose decode throws at run time: the server answers ERR, counts it and stays up; the client counts errors', async () => {
    // Refuses every frame whose length is a multiple of 3: some messages of test 3's stream, not all.
    const picky = moduleFile('picky.js', `export const format = 'picky'
export const binary = false
export function codecFor () {
  return {
    prepare: (plain) => plain,
    encode: (value) => JSON.stringify(value),
    decode: (frame) => { if (frame.length % 3 === 0) throw new Error('a length of three'); return JSON.parse(frame) },
    toPlain: (value) => value
  }
}
`)
    const server = await startServerProcess(['--codec-module', picky])
    try {
      const { code, report, stderr } = await clientReport('client.js', ['--codec-module', picky, '--format', 'picky', '3', '300', '--url', server.url])
      assert.equal(code, 1, stderr)
      const { errors, acked } = report.messages
      assert.ok(errors > 0 && acked > 0, `some refused (${errors}), some acked (${acked})`)
      const after = await clientReport('client_json.js', ['3', '20', '--url', server.url])
      assert.equal(after.code, 0, 'the server is still up')
      await server.stop()
      // The server counts as messages the ones it answered ACK: the client's acked, then 20 JSON ones.
      assert.match(server.output(), new RegExp(`stopped on SIGTERM after [\\d.]+ s: 2 connections served, ${acked + 20} messages, ${errors} decode errors`))
    } finally {
      await server.stop()
    }
  })

  test('--processes 2: every worker process adds the modules', async () => {
    const server = await startServerProcess(['--processes', '2', ...MODULES])
    try {
      const { code, report } = await clientReport('client.js', [...MODULES, '--format', 'json-envelope', '4', '200', '--url', server.url, '--connections', '8'])
      assert.equal(code, 0)
      assert.deepEqual(report.messages, { sent: 200, acked: 200, errors: 0, lost: 0 })
    } finally {
      await server.stop()
    }
  })

  test('npm run compare -- --codec-module M --formats json,NAME hands the module to the server and every client', async () => {
    const out = path.join(scratch, 'compare')
    const { code, stdout, stderr } = await runScript('bin/compare.js', ['--codec-module', BINARY, '--formats', 'protobuf,pbjs-reflect', '--tests', '5', '--trials', '2', '-n', '20', '--repeat', '--start-warmup', '100ms', '--out', out, '--json'])
    assert.equal(code, 0, stderr)
    const results = JSON.parse(stdout)
    assert.deepEqual(results.reports.map((report) => `${report.format}/${report.trial}`), ['protobuf/1', 'pbjs-reflect/1', 'protobuf/2', 'pbjs-reflect/2'])
    const planted = results.reports.filter((report) => report.format === 'pbjs-reflect')
    for (const report of planted) {
      assert.equal(report.codecModule, path.resolve(BINARY), 'the batch client loaded the module')
      assert.ok(report.codec.serverUs > 0, 'the server decoded with it and timed it')
      assert.equal(report.messages.errors, 0)
    }
    assert.equal(results.rows[0].ratios['pbjs-reflect'].wireBytes, 1, 'the same protobuf bytes on the wire: a ratio of exactly 1')
    assert.equal(results.rows[0].verdicts['pbjs-reflect'].bytes.call, 'equivalent')
  })

  test('pbjson check --format NAME --codec-module M: the format is told the .proto, and its fidelity is checked message by message', async () => {
    const run = await runScript('bin/pbjson.js', ['check', 'test/fixtures/infer/geojson.json', '--proto', 'test/fixtures/infer/geojson.proto', '--format', 'json-envelope', '--codec-module', TEXT])
    assert.equal(run.code, 0, run.stderr)
    assert.equal(run.stdout, 'lossless\n')
    const inferred = await runScript('bin/pbjson.js', ['infer', 'test/fixtures/infer/numbers.json'])
    const proto = moduleFile('numbers.proto', inferred.stdout)
    const lossy = await runScript('bin/pbjson.js', ['check', 'test/fixtures/infer/numbers.json', '--proto', proto, '--format', 'msgpack'])
    assert.equal(lossy.code, 1)
    assert.match(lossy.stdout, /^lossy: 3 differences\n {2}\$\.negative_zero: expected -0, actual 0\n/)
  })

  describe('bad modules: one line and exit 2, for server and clients alike, nothing started', () => {
    const cases = [
      ['a path that does not exist', path.join(os.tmpdir(), 'no-such-codec.js'), /^--codec-module \S+no-such-codec\.js: no such file$/],
      ['a module with a syntax error', () => moduleFile('broken.js', 'export const format = "broken"\n\nconst binary = ;\n'), /^--codec-module \S+broken\.js: cannot import it: SyntaxError: Unexpected token ';' at \S+broken\.js:3$/],
      ['a module without codecFor', () => moduleFile('no-codec.js', 'export const format = "no-codec"\nexport const binary = true\n'), /: exports no codecFor\(test\) function$/],
      ['a module without format', () => moduleFile('no-format.js', 'export const binary = true\nexport function codecFor () {}\n'), /: exports no format name/],
      ['a format name already taken', () => moduleFile('taken.js', 'export const format = "protobuf"\nexport const binary = true\nexport function codecFor () {}\n'), /: format 'protobuf' is taken \(built in\); name yours otherwise$/]
    ]
    for (const [what, file, pattern] of cases) {
      test(what, async () => {
        const module = typeof file === 'function' ? file() : file
        await Promise.all([['server.js', ['--port', '0']], ['client_json.js', ['3', '5']], ['client.js', ['--format', 'json', '3', '5']], ['bin/compare.js', ['--tests', '5']]].map(async ([script, args]) => {
          assertRefused(await runScript(script, [...args, '--codec-module', module]), pattern, `${script}: ${what}`)
        }))
      })
    }

    test('the same format from two modules', async () => {
      const one = moduleFile('one.js', 'export const format = "twin"\nexport const binary = true\nexport function codecFor () {}\n')
      const two = moduleFile('two.js', 'export const format = "twin"\nexport const binary = true\nexport function codecFor () {}\n')
      assertRefused(await runScript('server.js', ['--port', '0', '--codec-module', one, '--codec-module', two]), /: format 'twin' is taken \(by \S+one\.js\); name yours otherwise$/, 'twins')
    })

    test('a codec whose encode throws on the test\'s payload is refused before the run, naming the test', async () => {
      const failing = moduleFile('failing.js', `export const format = 'failing'
export const binary = true
export function codecFor (test) {
  return { prepare: (x) => x, encode: () => { throw new Error('no encoder for ' + test.name) }, decode: (f) => f, toPlain: (x) => x }
}
`)
      const [stream, one] = await Promise.all([
        runScript('client.js', ['--codec-module', failing, '--format', 'failing', '3', '5']),
        runScript('client.js', ['--codec-module', failing, '--format', 'failing', 'person', '5', '--repeat'])
      ])
      assertRefused(stream, /^format 'failing' cannot encode message 1 of test medium: no encoder for medium$/, 'encode')
      assertRefused(one, /^format 'failing' cannot encode test person: no encoder for person$/, 'encode, one message')
    })
  })
})
