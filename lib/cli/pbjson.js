// pbjson (bin/pbjson.js): infer one lossless .proto for a JSON document or a corpus of messages,
// or check message by message that a .proto carries them unchanged.
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { UsageError } from '../errors.js'
import { wholeNumber } from './parser.js'

const EXIT_LOSSY = 1

/** Sample size and example count given as text, so a typo is quoted as typed. */
function parseArgs (argv) {
  return yargs(hideBin(argv))
    .scriptName('pbjson')
    .usage('$0 <command>\n\nInfer a lossless proto3 schema from JSON, or check that a schema carries JSON unchanged.\n' +
      'JSON: one document, a JSON Lines file (.jsonl, .ndjson: one message per line), or a directory of .json files.')
    .command('infer <json>', 'print a .proto inferred from every message (what it saw goes to stderr)', (y) => y
      .positional('json', { describe: 'JSON document, JSON Lines file or directory', type: 'string' })
      .option('type', { describe: 'root message name', type: 'string', default: 'Payload' })
      .option('package', { describe: 'proto package', type: 'string', default: 'pbjson' })
      .option('sample', { describe: 'infer from the first N messages only', type: 'string' }))
    .command('check <json>', 'encode and decode every message with a .proto; exit 0 if lossless, 1 if not', (y) => y
      .positional('json', { describe: 'JSON document, JSON Lines file or directory', type: 'string' })
      .option('proto', { describe: '.proto file', type: 'string', demandOption: true })
      .option('type', { describe: 'message type (full or simple name)', type: 'string', default: 'Payload' })
      .option('examples', { describe: 'differences to show', type: 'string', default: '5' }))
    .example('$0 infer payload.json > payload.proto', 'infer the schema of payload.json')
    .example('$0 infer feed.jsonl > feed.proto', 'one schema for every message of a JSON Lines file')
    .example('$0 infer feed.jsonl --sample 1000 > feed.proto', 'infer from the first 1,000 messages')
    .example('$0 check feed.jsonl --proto feed.proto --type Payload', 'which messages (line, JSON path) the schema would change')
    .demandCommand(1, 'name a command: infer or check')
    .strict()
    .help()
    .version(false)
    .fail((message, err) => { throw err ?? new UsageError(`${message} (see pbjson --help)`) })
    .parseAsync()
}

/**
 * Runs pbjson.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0, or 1 when `check` finds a message the schema changes
 */
export async function runPbjsonCli (argv) {
  const args = await parseArgs(argv)
  const { readCorpus } = await import('../schema/corpus.js')
  const corpus = await readCorpus(args.json)
  return args._[0] === 'infer' ? infer(corpus, args) : check(corpus, args)
}

async function infer (corpus, args) {
  const { inferCorpusSchema, inferSchema } = await import('../schema/infer.js')
  const names = { typeName: args.type, packageName: args.package }
  if (corpus.kind === 'document') {
    process.stdout.write(inferSchema(corpus.messages[0].value, names).proto)
    return 0
  }
  const sample = args.sample === undefined ? corpus.messages.length : wholeNumber('sample', args.sample, 1)
  const messages = corpus.messages.slice(0, sample)
  const { proto, maps, unions } = inferCorpusSchema(messages, names)
  process.stdout.write(proto)
  const kinds = tagCounts(messages)
  process.stderr.write(`read ${messages.length} of ${corpus.messages.length} messages from ${corpus.file}` +
    `${kinds ? `; kinds by ${kinds.tag}: ${kinds.counts}` : ''}` +
    `; maps: ${maps.length ? maps.join(', ') : 'none'}; unions: ${unions.length ? unions.join(', ') : 'none'}\n`)
  return 0
}

/** The values of a tag every message carries (`type`, `event`, `kind`...), counted: the kinds of message. */
function tagCounts (messages) {
  for (const tag of ['type', 'event', 'kind', 'op', 'action', 'channel']) {
    const values = messages.map(({ value }) => value?.[tag])
    if (!values.every((value) => typeof value === 'string')) continue
    const counts = new Map()
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
    return { tag, counts: [...counts].map(([value, count]) => `${value} ${count}`).join(', ') }
  }
  return null
}

async function check (corpus, args) {
  const [{ readText }, { compileSchema }, { checkFidelity, checkMessages, formatDifference }] = await Promise.all([
    import('../schema/corpus.js'), import('../schema/compile.js'), import('../schema/fidelity.js')
  ])
  const type = compileSchema(await readText(args.proto), args.type, { filename: args.proto })
  const maxExamples = wholeNumber('examples', args.examples, 0)
  const checkOne = (value) => checkFidelity(type, value, { maxExamples })
  const { lossless, differences, messages, examples } = checkMessages(corpus.messages, checkOne, { maxExamples })
  if (lossless) {
    process.stdout.write('lossless\n')
    return 0
  }
  const of = corpus.messages.length > 1 ? ` in ${messages} of ${corpus.messages.length} messages` : ''
  const lines = examples.map((difference) => `  ${formatDifference(difference)}\n`).join('')
  process.stdout.write(`lossy: ${differences} difference${differences === 1 ? '' : 's'}${of}\n${lines}`)
  return EXIT_LOSSY
}
