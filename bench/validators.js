// npm run bench:validators — which JSON Schema validator the json-validated format uses: each
// candidate compiles the schema lib/schema/json-schema.js derives from a test's protobuf type,
// then validates every message of the test's stream (already parsed), timed with tinybench. Beside
// them, per message: JSON.parse of the same frames and protobuf.js decode (generated code) of
// theirs, what json and protobuf pay to read a message. A candidate is timed on a test only if it
// is fit for its schema: it accepts every message and gives the adapter's verdict on every probe
// (each value of the first message in turn given another JSON kind). The same fitness is checked
// on the inferred schemas of test/fixtures/infer, whose odd keys (__proto__, constructor) some
// validators mishandle.
import { createRequire } from 'node:module'
import fs from 'node:fs'
import os from 'node:os'
import { Bench } from 'tinybench'
import Ajv2020 from 'ajv/dist/2020.js'
import { validator as schemasafeValidator } from '@exodus/schemasafe'
import isMyJsonValid from 'is-my-json-valid'
import { Validator as CfworkerValidator } from '@cfworker/json-schema'
import { codecFor as jsonValidatedCodecFor } from '../lib/codecs/formats/json-validated.js'
import { codecFor as protobufCodecFor } from '../lib/codecs/formats/protobuf.js'
import { codecTest } from '../lib/codecs/registry.js'
import { loadMessages, resolveTest } from '../lib/payloads/catalog.js'
import { testLabel } from '../lib/report/report.js'
import { createAdapter } from '../lib/schema/adapter.js'
import { compileSchema } from '../lib/schema/compile.js'
import { inferSchema } from '../lib/schema/infer.js'
import { parseJsonExact, stringifyJsonExact } from '../lib/schema/json-exact.js'
import { jsonSchemaOfType } from '../lib/schema/json-schema.js'
import { selectedTests } from './support/formats.js'
import { printRow, startResults } from './support/results.js'

const require = createRequire(import.meta.url)
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 500)
// BENCH_TESTS picks tests: tests 1-5 and the two proto2 ones by default (people is one 12.9 MB message).
const SELECTED = selectedTests(['1', '2', '3', '4', '5', 'person', 'counters'].map(resolveTest))
const FIXTURES = new URL('../test/fixtures/infer/', import.meta.url)
const version = (name) => require(`${name}/package.json`).version

/**
 * Each candidate in its fastest configuration for JSON.parse output, compiled once per schema;
 * compile returns a function that tells whether a value is valid.
 */
const CANDIDATES = [
  {
    name: 'ajv',
    package: 'ajv',
    compile: (schema) => new Ajv2020({ strictTypes: false }).compile(schema)
  },
  {
    // What ajv needs for keys that Object.prototype has (constructor, toString): own properties only.
    name: 'ajv ownProperties',
    package: 'ajv',
    compile: (schema) => new Ajv2020({ strictTypes: false, ownProperties: true }).compile(schema)
  },
  {
    // isJSON: input from JSON.parse (no undefined, no functions); unmodifiedPrototypes: checks
    // own properties only for keys that Object.prototype has.
    name: 'schemasafe',
    package: '@exodus/schemasafe',
    compile: (schema) => schemasafeValidator(schema, { isJSON: true, unmodifiedPrototypes: true })
  },
  {
    name: 'is-my-json-valid',
    package: 'is-my-json-valid',
    compile: (schema) => isMyJsonValid(schema)
  },
  {
    name: '@cfworker/json-schema (interprets)',
    package: '@cfworker/json-schema',
    compile: (schema) => {
      const compiled = new CfworkerValidator(schema, '2020-12', true)
      return (value) => compiled.validate(value).valid
    }
  }
]

/** Copies of a value with one value at a time (at any depth) given another JSON kind. */
function probes (root) {
  const swapped = (value) => {
    if (Array.isArray(value)) return {}
    if (value === null) return undefined
    return { string: true, number: 'x', bigint: 'x', boolean: 'x', object: [] }[typeof value]
  }
  const out = []
  const walk = (value, replace) => {
    const other = swapped(value)
    if (other !== undefined) out.push(replace(other))
    if (value === null || typeof value !== 'object') return
    for (const key of Object.keys(value)) {
      walk(value[key], (replacement) => replace(Array.isArray(value)
        ? value.map((item, index) => String(index) === key ? replacement : item)
        : { ...value, [key]: replacement }))
    }
  }
  if (root !== null && typeof root === 'object') {
    for (const key of Object.keys(root)) walk(root[key], (replacement) => Array.isArray(root) ? Object.assign([...root], { [key]: replacement }) : { ...root, [key]: replacement })
  }
  return out
}

/**
 * What a fit validator answers: every message valid, and on each probe what the adapter's strict
 * toMessage says (it maps JSON kinds to fields as the schema does). Values are held exactly
 * (BigInt) for the adapter and as JSON.parse reads them for the validators.
 */
function fitnessCases (type, exactMessages) {
  const adapter = createAdapter(type)
  const accepts = (value) => {
    try {
      adapter.toMessage(value)
      return true
    } catch {
      return false
    }
  }
  const asParsed = (value) => JSON.parse(stringifyJsonExact(value))
  return [
    ...exactMessages.map((value) => ({ value: asParsed(value), valid: true })),
    ...probes(exactMessages[0]).map((value) => ({ value: asParsed(value), valid: accepts(value) }))
  ]
}

/** Why a validator is not fit for the cases, or null. */
function unfit (validate, cases) {
  const refused = cases.filter(({ value, valid }) => valid && !validate(value)).length
  if (refused) return `refuses ${refused} of ${cases.filter(({ valid }) => valid).length} valid messages`
  const accepted = cases.filter(({ value, valid }) => !valid && validate(value)).length
  if (accepted) return `accepts ${accepted} of ${cases.filter(({ valid }) => !valid).length} wrongly typed messages`
  return null
}

/** Compiles and checks a candidate; its compile time in ms, and why it is unfit or null. */
function tryCandidate (candidate, schema, cases) {
  const started = process.hrtime.bigint()
  try {
    const validate = candidate.compile(schema)
    const compileMs = Number(process.hrtime.bigint() - started) / 1e6
    return { validate, compileMs, why: unfit(validate, cases) }
  } catch (err) {
    return { why: `cannot compile the schema: ${err.message.split('\n')[0]}` }
  }
}

const nsPerMessage = (task, count) => task.result.latency.mean * 1e6 / count
let sink // keeps results alive so the engine cannot drop the work

const results = startResults('validators', 'npm run bench:validators')
/** Per test: the json-validated codec's decode against JSON.parse alone, and against protobuf decode. */
const costs = []
const columns = ['test', 'messages', 'reader', 'version', 'compile ms', 'ns/msg', '± %', 'vs JSON.parse', 'parse+validate vs protobuf decode']
const table = []
console.log(`# bench:validators — tinybench, ${TIME_MS} ms per task; mean ns per message over the test's stream`)
console.log(`# ${os.cpus().length} x ${os.cpus()[0].model}, Node ${process.version}`)
printRow(columns)
console.log('|---|---:|---|---|---:|---:|---:|---:|---:|')
for (const test of SELECTED) {
  const { messages } = loadMessages(test)
  const count = messages.length
  // The test as the registry tells a codec of it: its type by reflection over proto/.
  const view = await codecTest(test)
  const schema = jsonSchemaOfType(view.type)
  const jsonFrames = messages.map((message) => Buffer.from(JSON.stringify(message)))
  const parsed = jsonFrames.map((frame) => JSON.parse(frame.toString('utf8')))
  const protobuf = protobufCodecFor(view)
  const protobufFrames = messages.map((message) => protobuf.encode(protobuf.prepare(message)))
  const jsonValidated = jsonValidatedCodecFor(view)
  const cases = fitnessCases(view.type, messages)

  const bench = new Bench({ time: TIME_MS, warmupTime: 100, iterations: 10, warmupIterations: 2 })
  bench.add('JSON.parse', () => { for (const frame of jsonFrames) sink = JSON.parse(frame.toString('utf8')) })
  bench.add('protobuf decode', () => { for (const frame of protobufFrames) sink = protobuf.decode(frame) })
  bench.add('json-validated decode', () => { for (const frame of jsonFrames) sink = jsonValidated.decode(frame) })
  const timed = []
  const failed = []
  for (const candidate of CANDIDATES) {
    const { validate, compileMs, why } = tryCandidate(candidate, schema, cases)
    if (why) {
      failed.push({ candidate, why })
      continue
    }
    timed.push({ candidate, compileMs })
    bench.add(candidate.name, () => {
      let valid = true
      for (const value of parsed) valid = validate(value) && valid
      sink = valid
    })
  }
  await bench.run()

  const parse = nsPerMessage(bench.getTask('JSON.parse'), count)
  const decode = nsPerMessage(bench.getTask('protobuf decode'), count)
  const row = (reader, versionText, compileMs, ns, rme, extra) => {
    table.push([testLabel(test), count, reader, versionText, compileMs, ns.toFixed(0), rme.toFixed(1), `${(ns / parse).toFixed(2)}x`, extra])
    printRow(table.at(-1))
  }
  row('JSON.parse', process.version, '', parse, bench.getTask('JSON.parse').result.latency.rme, `${(parse / decode).toFixed(2)}x`)
  row('protobuf.js decode (static)', version('protobufjs'), '', decode, bench.getTask('protobuf decode').result.latency.rme, '1.00x')
  const codecTask = bench.getTask('json-validated decode')
  const codecNs = nsPerMessage(codecTask, count)
  row('json-validated decode (the codec: parse, then schemasafe)', '', '', codecNs, codecTask.result.latency.rme, `${(codecNs / decode).toFixed(2)}x`)
  costs.push({ validated: codecNs / parse, protobuf: codecNs / decode })
  for (const { candidate, compileMs } of timed) {
    const task = bench.getTask(candidate.name)
    const ns = nsPerMessage(task, count)
    row(`${candidate.name} validate`, version(candidate.package), compileMs.toFixed(1), ns, task.result.latency.rme, `${((parse + ns) / decode).toFixed(2)}x`)
  }
  for (const { candidate, why } of failed) {
    table.push([testLabel(test), count, `${candidate.name} validate`, version(candidate.package), '', '', '', '', `not timed: ${why}`])
    printRow(table.at(-1))
  }
}

// Fitness for users' payloads: every fixture document under its inferred schema, with probes.
const fixtures = fs.readdirSync(FIXTURES).filter((name) => name.endsWith('.json')).sort().map((name) => {
  const value = parseJsonExact(fs.readFileSync(new URL(name, FIXTURES), 'utf8'))
  const inferred = inferSchema(value)
  const type = compileSchema(inferred.proto, inferred.typeName)
  // Every key of an inferred schema is optional: the empty object is valid, even where the
  // document has keys that Object.prototype has too.
  const empty = Array.isArray(value) || value === null || typeof value !== 'object' ? [] : [{ value: {}, valid: true }]
  return { name, schema: jsonSchemaOfType(type), cases: [...fitnessCases(type, [value]), ...empty] }
})
for (const candidate of CANDIDATES) {
  let compileMs = 0
  const unfitFor = []
  for (const { name, schema, cases } of fixtures) {
    const tried = tryCandidate(candidate, schema, cases)
    compileMs += tried.compileMs ?? 0
    if (tried.why) unfitFor.push(`${name} ${tried.why}`)
  }
  const verdict = unfitFor.length ? `unfit: ${unfitFor.join('; ')}` : 'fit for every one'
  table.push([`inferred fixtures (${fixtures.length})`, fixtures.reduce((sum, { cases }) => sum + cases.length, 0), `${candidate.name} validate`, version(candidate.package), compileMs.toFixed(1), '', '', '', verdict])
  printRow(table.at(-1))
}
results.write({
  columns,
  rows: table,
  figures: costFigures(costs),
  notes: [
    `tinybench: ${TIME_MS} ms and at least 10 samples per task after 100 ms of warm-up; a task reads the whole stream, ns/msg is its mean over the messages, ± the relative margin of error.`,
    'Validators run on JSON.parse output of the stream, with the JSON Schema lib/schema/json-schema.js derives from the test\'s protobuf type (2020-12); compile ms includes the fitness check. ' +
      'JSON.parse reads from Buffers as the json codec does; protobuf.js decode is the generated code\'s, on the same messages. ' +
      '"parse+validate vs protobuf decode": JSON.parse plus that validator, against protobuf decode; json-validated decode is the format\'s codec, measured whole.',
    'A candidate is timed on a test only if it accepts every message of the stream and gives lib/schema/adapter.js\'s verdict on every probe: the first message with one value at a time given another JSON kind. ' +
      'The inferred fixtures rows check the same on every document of test/fixtures/infer under its inferred schema (messages: documents and probes).'
  ]
})
if (sink === Symbol.for('never')) console.log(sink)

/** The README's sentence figures: the ranges over the tests of what validation costs and protobuf gains. */
function costFigures (costs) {
  const range = (values, digits) => `${Math.min(...values).toFixed(digits)}x to ${Math.max(...values).toFixed(digits)}x`
  return {
    'validated-vs-parse': range(costs.map((cost) => cost.validated), 2),
    'validated-vs-protobuf': range(costs.map((cost) => cost.protobuf), 1)
  }
}
