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

// The two rooms a message travels through stay readable: small classes, data flowing one way (a
// channel and a phase know nothing of the run), and nothing named from the command line above
// them. Read from the source's standard layout (neostandard): a top-level class closes with `}` in
// column 0.
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

// One length for every function in lib/, whatever its form, read from the standard layout
// (neostandard): declared or assigned an arrow at the top level (column 0), a callback a
// top-level statement hands over, or a method, field or property holding one (column 2). A
// function ends at the bracket that closes it at its own indent; an arrow without braces, with
// the more-indented lines that follow it.
const FUNCTION_OPENINGS = [
  /^(?:export )?(?:default )?(?:async )?function ?\*? ?(\w*) ?\(/,
  /^(?:export )?(?:const|let|var) (\w+) = (?:async )?(?:\([^)]*\)|\w+) =>/,
  /^([\w$.]+)\(.*(?:=>|\bfunction\b.*\)) \{$/,
  /^ {2}(?:(?:async|static|get|set) )*\*? ?(?!(?:if|for|while|switch|catch|with)\b)(#?\w+) \(.*\) \{$/,
  /^ {2}(?:static )?(#?\w+)(?: =|:) (?:async )?(?:function ?\*? ?\w* ?\(|(?:\([^)]*\)|\w+) =>)/
]

/** Each function in a module's text, with the line it opens on and its length in lines. */
function functionsOf (text) {
  const lines = text.split('\n')
  return lines.flatMap((line, start) => {
    const name = FUNCTION_OPENINGS.map((form) => form.exec(line)).find(Boolean)?.[1]
    if (name === undefined) return []
    const indent = /^ */.exec(line)[0]
    // A line that closes at the indent and opens nothing: not `}) {`, the end of a parameter list.
    const closer = new RegExp(`^${indent}[}\\])][^{([]*$`)
    let end = start
    if (/[{([]$/.test(line)) end = lines.findIndex((next, i) => i > start && closer.test(next))
    else while (lines[end + 1]?.startsWith(`${indent} `)) end++
    return [{ name: name || 'default', line: start + 1, length: end - start + 1 }]
  })
}

test('the function-length rule sees a function in every form lib/ writes one', () => {
  const sample = [
    'export async function declared (x) {', '  return x', '}',
    'function * generator () {', '  yield 1', '}',
    'export const arrow = async (x) => {', '  return x', '}',
    'const bare = (x) =>', '  x + 1',
    "process.on('message', (message) => {", '  handle(message)', '})',
    'export function destructured ({', '  a', '}) {', '  return a', '}',
    'class Room {', '  static async method (x) {', '    if (x) {', '      return x', '    }', '  }', '  field = () => {', '    return 1', '  }', '}',
    'const TABLE = {', '  property: (x) => {', '    return x', '  },', '  short (x) { return x }', '}'
  ].join('\n')
  assert.deepEqual(functionsOf(sample).map(({ name, length }) => `${name} ${length}`),
    ['declared 3', 'generator 3', 'arrow 3', 'bare 2', 'process.on 3', 'destructured 5', 'method 5', 'field 3', 'property 3'])
})

// Functions let be longer, by name, each with why. Each must still be over the limit: a stale entry fails too.
const LONG_BY_NAME = {}

test('lib/: no function is over 60 lines, but those named with a reason', () => {
  const long = libFiles.flatMap((file) => functionsOf(source(file))
    .filter(({ length }) => length > 60)
    .map(({ name, line, length }) => ({
      key: `${path.relative(LIB, file)} ${name}`,
      where: `${path.relative(LIB, file)}:${line} ${name}: ${length} lines`
    })))
  assert.deepEqual(long.filter(({ key }) => !Object.hasOwn(LONG_BY_NAME, key)).map(({ where }) => where), [])
  assert.deepEqual(Object.keys(LONG_BY_NAME).filter((key) => !long.some((found) => found.key === key)), [])
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
