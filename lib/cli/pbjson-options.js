// pbjson's command line (bin/pbjson.js): infer or check, and their options, checked.
import yargs from 'yargs'
import { hideBin } from 'yargs/helpers'
import { UsageError } from '../errors.js'
import { CODEC_MODULE_OPTION, codecModulesFor, wholeNumber } from './parser.js'
import { programName } from './program.js'

/**
 * @typedef {object} PbjsonOptions
 * @property {'infer'|'check'} command
 * @property {string} json the JSON document, JSON Lines file or directory
 * @property {string} type root message name (infer) or the message type to check with (check)
 * @property {string} [package] proto package (infer)
 * @property {number} [sample] infer from the first this many messages only (infer)
 * @property {string} [proto] the .proto file (check)
 * @property {number} [examples] differences to show (check)
 * @property {string} [format] check with this format's codec, given the .proto, instead of protobuf's (check)
 * @property {string[]} [codecModules] --codec-module's files (check)
 */

/**
 * Parses pbjson's command line. Sample size and example count are read as text, so a typo is
 * quoted as typed.
 * @param {string[]} argv process.argv
 * @returns {Promise<PbjsonOptions>}
 */
export async function parsePbjsonArgs (argv) {
  const args = await yargs(hideBin(argv))
    .scriptName(programName('pbjson'))
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
      .option('examples', { describe: 'differences to show', type: 'string', default: '5' })
      .option('format', { describe: 'check with another format\'s codec, told the .proto (json-validated, a --codec-module\'s...)', type: 'string' })
      .options(CODEC_MODULE_OPTION))
    .example('$0 infer payload.json > payload.proto', 'infer the schema of payload.json')
    .example('$0 infer feed.jsonl > feed.proto', 'one schema for every message of a JSON Lines file')
    .example('$0 infer feed.jsonl --sample 1000 > feed.proto', 'infer from the first 1,000 messages')
    .example('$0 check feed.jsonl --proto feed.proto --type Payload', 'which messages (line, JSON path) the schema would change')
    .example('$0 check feed.jsonl --proto feed.proto --format json-validated', 'which messages the schema\'s JSON validation refuses')
    .demandCommand(1, 'name a command: infer or check')
    .strict()
    .help()
    .version(false)
    .fail((message, err) => { throw err ?? new UsageError(`${message} (see ${programName('pbjson')} --help)`) })
    .parseAsync()
  const command = args._[0]
  if (command === 'check') {
    const codecModules = await codecModulesFor(args.codecModule, args.format === undefined ? [] : [args.format])
    const examples = wholeNumber('examples', args.examples, 0)
    return { command, json: args.json, type: args.type, proto: args.proto, examples, format: args.format, codecModules }
  }
  const sample = args.sample === undefined ? undefined : wholeNumber('sample', args.sample, 1)
  return { command, json: args.json, type: args.type, package: args.package, sample }
}
