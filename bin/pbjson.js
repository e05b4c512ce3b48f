#!/usr/bin/env node
// pbjson: infer a lossless .proto from a JSON document, or check that a .proto carries it unchanged.

import { readFile } from 'node:fs/promises'
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { UsageError, runMain } from '../lib/errors.js'
import { compileSchema } from '../lib/schema/compile.js'
import { checkFidelity } from '../lib/schema/fidelity.js'
import { inferSchema } from '../lib/schema/infer.js'
import { parseJsonExact, stringifyJsonExact } from '../lib/schema/json-exact.js'

const EXIT_LOSSY = 1

async function readText (path) {
  try {
    // A byte order mark is not JSON, but editors write one.
    return (await readFile(path, 'utf8')).replace(/^\uFEFF/, '')
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${err.code ?? err.message}`)
  }
}

async function readJson (path) {
  const text = await readText(path)
  try {
    return parseJsonExact(text)
  } catch (err) {
    if (err instanceof UsageError) err.message = `${path}: ${err.message}`
    throw err
  }
}

const shown = (value) => {
  if (value === undefined) return '(absent)'
  const text = stringifyJsonExact(value)
  return text.length > 80 ? `${text.slice(0, 77)}...` : text
}

function parseArgs (argv) {
  return yargs(argv)
    .scriptName('pbjson')
    .usage('$0 <command>\n\nInfer a lossless proto3 schema from JSON, or check that a schema carries JSON unchanged.')
    .command('infer <json>', 'print a .proto inferred from a JSON document', (y) => y
      .positional('json', { describe: 'JSON file', type: 'string' })
      .option('type', { describe: 'root message name', type: 'string', default: 'Payload' })
      .option('package', { describe: 'proto package', type: 'string', default: 'pbjson' }))
    .command('check <json>', 'encode and decode the JSON with a .proto; exit 0 if lossless, 1 if not', (y) => y
      .positional('json', { describe: 'JSON file', type: 'string' })
      .option('proto', { describe: '.proto file', type: 'string', demandOption: true })
      .option('type', { describe: 'message type (full or simple name)', type: 'string', default: 'Payload' })
      .option('examples', { describe: 'differences to show', type: 'number', default: 5 }))
    .example('$0 infer payload.json > payload.proto', 'infer the schema of payload.json')
    .example('$0 infer payload.json --type Order --package shop', 'name the root message shop.Order')
    .example('$0 check payload.json --proto payload.proto --type Payload', 'say whether payload.proto keeps payload.json exactly')
    .demandCommand(1, 'name a command: infer or check')
    .strict()
    .help()
    .version(false)
    .fail((message, err) => { throw err ?? new UsageError(`${message} (see pbjson --help)`) })
    .parseAsync()
}

runMain(async () => {
  const args = await parseArgs(hideBin(process.argv))
  const json = await readJson(args.json)
  if (args._[0] === 'infer') {
    process.stdout.write(inferSchema(json, { typeName: args.type, packageName: args.package }).proto)
    return 0
  }
  const type = compileSchema(await readText(args.proto), args.type, { filename: args.proto })
  const { lossless, differences, examples } = checkFidelity(type, json, { maxExamples: args.examples })
  if (lossless) {
    process.stdout.write('lossless\n')
    return 0
  }
  const lines = examples.map(({ path, expected, actual }) => `  ${path}: expected ${shown(expected)}, actual ${shown(actual)}`)
  process.stdout.write(`lossy: ${differences} difference${differences === 1 ? '' : 's'}\n${lines.join('\n')}\n`)
  return EXIT_LOSSY
})
