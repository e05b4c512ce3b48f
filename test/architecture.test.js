// The shape of lib/, checked: one folder per subsystem, dependencies pointing down only, no import
// cycles, nothing imported from data/, test/ or bench/. Reads the source; runs none of it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'

// Each subsystem may import the ones below it. The shared leaves at lib/'s top import no subsystem.
const LAYERS = [
  ['errors', 'defaults', 'protocol', 'display', 'histogram', 'processes', 'cpu-time', 'provenance'],
  // reference: the servers of servers/, found and built (compare, capacity and cli run them).
  ['network', 'schema', 'reference'],
  // outputs: --out's metrics streams (lib/cli starts them, lib/load's runs say what they measured so far).
  ['payloads', 'outputs'],
  ['codecs', 'report'],
  ['load', 'server'],
  ['compare'],
  ['capacity'],
  // index: what the package exports to code that imports it (package.json's main).
  ['cli', 'index']
]
const LEVEL = new Map(LAYERS.flatMap((names, level) => names.map((name) => [name, level])))

const LIB = path.join(PROJECT_ROOT, 'lib')
const libFiles = fs.readdirSync(LIB, { recursive: true }).filter((file) => file.endsWith('.js')).map((file) => path.join(LIB, file))
const subsystem = (file) => path.relative(LIB, file).split(path.sep)[0].replace(/\.js$/, '')

/** Relative imports that run (static and dynamic), not JSDoc type references in comments. */
function importsOf (file) {
  const code = fs.readFileSync(file, 'utf8').replace(/\/\*[^]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '')
  return [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bnew URL\(\s*)'(\.{1,2}\/[^']*)'/g)]
    .map((match) => path.resolve(path.dirname(file), match[1]))
}

test('every lib/ module sits in a subsystem folder or is one of the few shared leaves', () => {
  for (const file of libFiles) assert.ok(LEVEL.has(subsystem(file)), `${path.relative(PROJECT_ROOT, file)}: not in a known subsystem`)
  const leaves = libFiles.filter((file) => path.dirname(file) === LIB).map((file) => path.basename(file, '.js')).filter((name) => name !== 'index')
  assert.deepEqual(leaves.sort(), LAYERS[0].slice().sort())
})

test('dependencies point down: a subsystem imports only those below it, leaves import no subsystem', () => {
  const upward = []
  for (const file of libFiles) {
    for (const target of importsOf(file)) {
      if (!target.startsWith(LIB + path.sep)) continue
      const from = subsystem(file)
      const to = subsystem(target)
      if (from !== to && LEVEL.get(to) >= LEVEL.get(from)) upward.push(`${path.relative(LIB, file)} -> ${path.relative(LIB, target)}`)
    }
  }
  assert.deepEqual(upward, [])
})

test('lib/ imports nothing from data/, test/ or bench/, only its own files, proto/ and vendor/', () => {
  const outside = libFiles.flatMap((file) => importsOf(file)
    .filter((target) => !target.startsWith(LIB + path.sep))
    .map((target) => path.relative(PROJECT_ROOT, target))
    .filter((target) => !/^(proto|vendor)(\/|$)/.test(target)))
  assert.deepEqual(outside, [])
})

test('no import cycles between lib/ modules', () => {
  const graph = new Map(libFiles.map((file) => [file, importsOf(file).filter((target) => target.endsWith('.js') && target.startsWith(LIB))]))
  const state = new Map()
  const cycles = []
  const visit = (file, trail) => {
    if (state.get(file) === 'done') return
    if (state.get(file) === 'open') return cycles.push([...trail.slice(trail.indexOf(file)), file].map((f) => path.relative(LIB, f)).join(' -> '))
    state.set(file, 'open')
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file])
    state.set(file, 'done')
  }
  for (const file of libFiles) visit(file, [])
  assert.deepEqual(cycles, [])
})

// The two rooms a message travels through stay readable: small classes, short functions, data
// flowing one way (a channel and a phase know nothing of the run), and nothing named from the
// command line above them. Read from the source's standard layout (neostandard): classes and
// functions at the top level close with `}` in column 0, methods with `}` in column 2.
const ROOMS = libFiles.filter((file) => ['load', 'server'].includes(subsystem(file)))
const source = (file) => fs.readFileSync(file, 'utf8')
const withoutComments = (code) => code.replace(/\/\*[^]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '').replace(/\s\/\/.*$/gm, '')

test('lib/load and lib/server: no class has more than 20 fields', () => {
  const crowded = []
  for (const file of ROOMS) {
    for (const [, name, body] of withoutComments(source(file)).matchAll(/^(?:export )?class (\w+)[^{]*\{\n([^]*?)^\}/gm)) {
      const fields = new Set([...body.matchAll(/\bthis\.(\w+)\s*(?:=|\+\+|--|\+=|-=|\?\?=)(?!=)/g)].map((match) => match[1]))
      if (fields.size > 20) crowded.push(`${path.relative(LIB, file)} ${name}: ${fields.size} fields`)
    }
  }
  assert.deepEqual(crowded, [])
})

test('lib/load and lib/server: no function is over 60 lines', () => {
  const long = []
  for (const file of ROOMS) {
    const lines = source(file).split('\n')
    lines.forEach((line, i) => {
      const opening = /^(?:export )?(?:async )?function\*? (\w+)|^ {2}(?:async |static |get |set )?(\w+) \([^)]*\) \{$/.exec(line)
      if (!opening) return
      const closing = opening[1] ? '}' : '  }'
      const end = lines.findIndex((text, j) => j > i && text === closing)
      if (end - i + 1 > 60) long.push(`${path.relative(LIB, file)}:${i + 1} ${opening[1] ?? opening[2]}: ${end - i + 1} lines`)
    })
  }
  assert.deepEqual(long, [])
})

test('a channel and a phase hold no reference to the run; lib/load and lib/server name nothing from lib/cli', () => {
  for (const name of ['channel.js', 'phase.js']) {
    assert.doesNotMatch(withoutComments(source(path.join(LIB, 'load', name))), /\brun\b/i, `lib/load/${name}`)
  }
  const naming = ROOMS.filter((file) => /\blib\/cli\/|\.\.\/cli\//.test(source(file))).map((file) => path.relative(LIB, file))
  assert.deepEqual(naming, [])
})

// A format is one module: what it can do is what it declares, so nothing else asks for it by name.
test('no lib/ module but a format\'s own compares anything with that format\'s name', () => {
  const formats = fs.readdirSync(path.join(LIB, 'codecs', 'formats')).filter((file) => file.endsWith('.js')).map((file) => file.slice(0, -3))
  const checks = []
  for (const file of libFiles) {
    const code = withoutComments(source(file))
    for (const format of formats) {
      if (file === path.join(LIB, 'codecs', 'formats', `${format}.js`)) continue
      const name = format.replace(/[.-]/g, '\\$&')
      if (new RegExp(`(===|!==|\\bcase)\\s*'${name}'|'${name}'\\s*(===|!==)|includes\\('${name}'\\)`).test(code)) checks.push(`${path.relative(LIB, file)}: ${format}`)
    }
  }
  assert.deepEqual(checks, [])
})
