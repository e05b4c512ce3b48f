// npm run docs:results (tools/docs-results.js) on a temporary copy of the docs: tables written from
// result files, idempotent, --check catching a stale or hand-edited table and a table measured
// with an older method, a missing result file as one line, a real comparison recorded with --from-compare; and the committed docs up to date.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runScript } from '../helpers.js'
import { COMPARE_METHOD } from '../../lib/compare/results.js'

const SCRIPT = 'tools/docs-results.js'

function tempProject (readme) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-results-'))
  fs.mkdirSync(path.join(root, 'docs/results'), { recursive: true })
  fs.writeFileSync(path.join(root, 'README.md'), readme)
  return root
}

const result = (rows) => ({
  name: 'size',
  command: 'npm run bench:size',
  machine: { cpus: 2, model: 'Test CPU', memoryGiB: 8, node: 'v20.20.2', platform: 'linux 6.1', loadAverage: 0.5 },
  startedAt: '2026-01-02T03:04:05.000Z',
  durationMs: 1500,
  columns: ['test', 'format', 'bytes'],
  rows,
  notes: ['one note']
})

const README = '# Sizes\n\n<!-- results:size -->\n<!-- /results:size -->\n\nAfter.\n'

test('writes the table with command, machine, date and duration; idempotent; --check finds stale and hand-edited tables', async (t) => {
  const root = tempProject(README)
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const file = path.join(root, 'docs/results/size.json')
  fs.writeFileSync(file, JSON.stringify(result([['5 small', 'json', 22], ['5 small', 'protobuf', 6]])))

  const stale = await runScript(SCRIPT, ['--root', root, '--check'])
  assert.equal(stale.code, 1, 'an empty region is out of date')
  assert.equal(stale.stderr, 'out of date with docs/results and --help: README.md (run npm run docs:results)\n')

  const run = await runScript(SCRIPT, ['--root', root])
  assert.equal(run.code, 0, run.stderr)
  const written = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  assert.equal(written, [
    '# Sizes',
    '',
    '<!-- results:size -->',
    '| test | format | bytes |',
    '|---|---|---:|',
    '| 5 small | json | 22 |',
    '| 5 small | protobuf | 6 |',
    '',
    '`npm run bench:size` on 2 cores (Test CPU), 8 GiB, Node v20.20.2, linux 6.1, load average 0.5 at the start; 2026-01-02 03:04 UTC, 1.5 s.',
    '',
    'one note.',
    '<!-- /results:size -->',
    '',
    'After.',
    ''
  ].join('\n'))

  const again = await runScript(SCRIPT, ['--root', root])
  assert.equal(again.code, 0, again.stderr)
  assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), written, 'a second run changes nothing')
  assert.equal((await runScript(SCRIPT, ['--root', root, '--check'])).code, 0)

  // A new result file: the doc is now stale, and --check leaves it as it is.
  fs.writeFileSync(file, JSON.stringify(result([['5 small', 'json', 22], ['5 small', 'protobuf', 7]])))
  const check = await runScript(SCRIPT, ['--root', root, '--check'])
  assert.equal(check.code, 1)
  assert.match(check.stderr, /README\.md/)
  assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), written)

  // A hand edit inside the region is caught too, and undone by a run.
  fs.writeFileSync(file, JSON.stringify(result([['5 small', 'json', 22], ['5 small', 'protobuf', 6]])))
  fs.writeFileSync(path.join(root, 'README.md'), written.replace('| 5 small | protobuf | 6 |', '| 5 small | protobuf | 5 |'))
  assert.equal((await runScript(SCRIPT, ['--root', root, '--check'])).code, 1)
  assert.equal((await runScript(SCRIPT, ['--root', root])).code, 0)
  assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), written)
})

test('a marker naming a missing result file fails with one line and writes nothing', async (t) => {
  const root = tempProject(`${README}\n<!-- results:nowhere -->\n<!-- /results:nowhere -->\n`)
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  fs.writeFileSync(path.join(root, 'docs/results/size.json'), JSON.stringify(result([['1 numbers', 'json', 292]])))
  const before = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const run = await runScript(SCRIPT, ['--root', root])
  assert.equal(run.code, 1)
  assert.equal(run.stderr, 'error: README.md: <!-- results:nowhere --> needs docs/results/nowhere.json, which does not exist\n')
  assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), before)
})

test('a figure in a sentence comes from its result file; --check catches a hand-typed one; an unknown key is one line', async (t) => {
  const root = tempProject('Protobuf frames are <!-- figure:size.ratio -->0.3x<!-- /figure --> of JSON\'s.\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const file = path.join(root, 'docs/results/size.json')
  fs.writeFileSync(file, JSON.stringify({ ...result([['5 small', 'json', 28]]), figures: { ratio: '0.43x' } }))
  assert.equal((await runScript(SCRIPT, ['--root', root, '--check'])).code, 1, 'the hand-typed 0.3x is stale')
  assert.equal((await runScript(SCRIPT, ['--root', root])).code, 0)
  const written = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  assert.equal(written, 'Protobuf frames are <!-- figure:size.ratio -->0.43x<!-- /figure --> of JSON\'s.\n')
  assert.equal((await runScript(SCRIPT, ['--root', root, '--check'])).code, 0)

  fs.writeFileSync(path.join(root, 'README.md'), `${written}And <!-- figure:size.nothing -->1<!-- /figure -->.\n`)
  const unknown = await runScript(SCRIPT, ['--root', root])
  assert.equal(unknown.code, 1)
  assert.equal(unknown.stderr, 'error: README.md: <!-- figure:size.nothing --> names no figure of docs/results/size.json\n')
})

test('--check fails on a table measured with an older method than its command\'s now, naming the command that remakes it', async (t) => {
  const root = tempProject('<!-- results:people -->\n<!-- /results:people -->\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const file = path.join(root, 'docs/results/people.json')
  const people = { ...result([['people', 'json', 1]]), name: 'people', command: 'npm run compare -- --tests people' }
  const check = async (document) => {
    fs.writeFileSync(file, JSON.stringify(document))
    assert.equal((await runScript(SCRIPT, ['--root', root])).code, 0)
    return runScript(SCRIPT, ['--root', root, '--check'])
  }
  const older = await check({ ...people, methods: { compare: COMPARE_METHOD.version - 1 }, commit: 'abc' })
  assert.equal(older.code, 1)
  assert.equal(older.stderr, `stale: docs/results/people.json was measured with an older method (compare version ${COMPARE_METHOD.version - 1}, ` +
    `now ${COMPARE_METHOD.version}): remake it with npm run compare -- --tests people\n`)
  // A result from before results recorded their method: dated against the time the method took effect.
  const before = await check({ ...people, startedAt: new Date(Date.parse(COMPARE_METHOD.since) - 1).toISOString() })
  assert.equal(before.code, 1)
  assert.match(before.stderr, /^stale: docs\/results\/people\.json .*\(compare before version \d+ \(\d{4}-\d\d-\d\d\)\): remake it with npm run compare -- --tests people\n$/)
  assert.equal((await check({ ...people, startedAt: COMPARE_METHOD.since })).code, 0)
  const current = await check({ ...people, methods: { compare: COMPARE_METHOD.version }, commit: 'abc' })
  assert.equal(current.code, 0, current.stderr)
})

test('<!-- commands:all --> lists the command that remakes each result file, once each, a comparison with its recording step', async (t) => {
  const root = tempProject('<!-- commands:all -->\n<!-- /commands:all -->\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const write = (name, command) => fs.writeFileSync(path.join(root, `docs/results/${name}.json`), JSON.stringify({ ...result([]), name, command }))
  write('compare', 'npm run compare')
  write('compare-figures', 'npm run compare')
  write('compare-people', 'npm run compare -- --tests people')
  write('engine', 'BENCH_ROUNDS=5 npm run bench:engine')
  write('engine-tls', 'BENCH_ROUNDS=5 npm run bench:engine')
  assert.equal((await runScript(SCRIPT, ['--root', root])).code, 0)
  assert.equal(fs.readFileSync(path.join(root, 'README.md'), 'utf8'), [
    '<!-- commands:all -->',
    '```sh',
    'npm run compare && npm run docs:results -- --from-compare compare-report/results.json',
    'npm run compare -- --tests people && npm run docs:results -- --from-compare compare-report/results.json --name compare-people',
    'BENCH_ROUNDS=5 npm run bench:engine',
    '```',
    '<!-- /commands:all -->',
    ''
  ].join('\n'))
})

test('--from-compare records a real comparison as the verdict table and the figures table', async (t) => {
  const root = tempProject('<!-- results:compare -->\n<!-- /results:compare -->\n\n<!-- results:compare-figures -->\n<!-- /results:compare-figures -->\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const out = path.join(root, 'compare-report')
  const compare = await runScript('bin/compare.js', ['--tests', 'small', '--trials', '2', '-n', '50', '--start-warmup', '200ms', '--out', out])
  assert.equal(compare.code, 0, compare.stderr)

  const run = await runScript(SCRIPT, ['--root', root, '--from-compare', path.join(out, 'results.json')])
  assert.equal(run.code, 0, run.stderr)
  const verdicts = JSON.parse(fs.readFileSync(path.join(root, 'docs/results/compare.json'), 'utf8'))
  assert.match(verdicts.command, /^npm run compare -- --tests small --trials 2( |$)/)
  assert.deepEqual(verdicts.columns, [
    'test', 'network', 'format', 'p50', 'p99', 'msgs/s', 'wire bytes', 'client CPU/msg', 'server CPU/msg', 'client codec/msg', 'server codec/msg', 'verdict'
  ])
  assert.equal(verdicts.rows.length, 1)
  assert.deepEqual(verdicts.rows[0].slice(0, 3), ['5 small', 'loopback', 'protobuf vs json'])
  // Every generation sends the same messages of the stream in both formats: an exact ratio.
  assert.match(verdicts.rows[0][6], /^0\.4\dx \((0\.4\d)-\1\) better$/, 'wire bytes: protobuf vs json, 6-8 against 22-28 bytes and their headers')
  assert.match(verdicts.notes[0], /^2 generations, after unrecorded warm-ups/)
  assert.deepEqual(verdicts.methods, { compare: COMPARE_METHOD.version }, 'the method it was measured with')
  assert.match(verdicts.commit, /^[0-9a-f]{12}(\+changes)?$/)
  const figures = JSON.parse(fs.readFileSync(path.join(root, 'docs/results/compare-figures.json'), 'utf8'))
  assert.deepEqual(figures.methods, verdicts.methods)
  assert.deepEqual(figures.rows.map((row) => row[2]), ['json', 'protobuf', 'protobuf/json'])
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  assert.match(readme, /\| 5 small \| loopback \| protobuf vs json \|/)
  assert.match(readme, /`npm run compare -- --tests small --trials 2[^`]*` on \d+ cores/)

  await t.test('the command recorded reproduces the run: -n, the messages per batch, included', () => {
    assert.equal(verdicts.command, 'npm run compare -- --tests small --trials 2 -n 50')
  })
})

test('--from-compare records a calibration: its command with the side planted, its lines in the notes, its words as figures', async (t) => {
  const root = tempProject('<!-- results:calibrated -->\n<!-- /results:calibrated -->\n\nServer CPU <!-- figure:calibrated.small-server-cpu --><!-- /figure -->: ' +
    '<!-- figure:calibrated.small-verdict --><!-- /figure -->.\n')
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const out = path.join(root, 'compare-report')
  const compare = await runScript('bin/compare.js', ['--calibrate', 'server:200', '--tests', 'small', '--trials', '2', '-n', '20', '--start-warmup', '100ms', '--out', out])
  assert.equal(compare.code, 0, compare.stderr)
  const run = await runScript(SCRIPT, ['--root', root, '--from-compare', path.join(out, 'results.json'), '--name', 'calibrated'])
  assert.equal(run.code, 0, run.stderr)
  const recorded = JSON.parse(fs.readFileSync(path.join(root, 'docs/results/calibrated.json'), 'utf8'))
  assert.equal(recorded.command, 'npm run compare -- --calibrate server:200 --tests small --trials 2 -n 20')
  const { calibration } = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'))
  assert.deepEqual(recorded.notes.filter((note) => note.startsWith('Calibration: ')), calibration.lines.map((line) => `Calibration: ${line}.`))
  assert.deepEqual(Object.keys(recorded.figures), ['small-p50', 'small-server-cpu', 'small-client-cpu', 'small-verdict'])
  assert.ok(calibration.lines[0].endsWith(`: ${recorded.figures['small-verdict']}`), recorded.figures['small-verdict'])
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  assert.ok(readme.includes(`Server CPU <!-- figure:calibrated.small-server-cpu -->${recorded.figures['small-server-cpu']}<!-- /figure -->: `), readme)
  assert.match(recorded.figures['small-server-cpu'], /^[+-][\d.]+ µs \([+-][\d.]+ to [+-][\d.]+\) \w+, tells ±[\d.]+ µs$/)
})

test('the committed README and docs are up to date with docs/results and every --help', async () => {
  const check = await runScript(SCRIPT, ['--check'])
  assert.equal(check.code, 0, check.stderr)
})
