#!/usr/bin/env node
// The installed command: ws-json-vs-protobuf <command> [options], one name for everything the
// package runs (also through npx). Each command is the checkout's own entry point, run as is.
import { fileURLToPath } from 'node:url'
import { runAs } from '../lib/cli/program.js'

const NAME = 'ws-json-vs-protobuf'

/** Each command: its entry point, and what it does. */
const COMMANDS = {
  compare: ['./compare.js', 'the main job: JSON vs protobuf on an embedded server, with verdicts'],
  capacity: ['./capacity.js', 'how many msgs/s one server core takes per format within a latency objective'],
  server: ['../server.js', 'the benchmark server: decodes each format and replies ACK'],
  client: ['../client.js', 'a load client in any --format'],
  'client-json': ['../client_json.js', 'a load client sending JSON'],
  'client-protobuf': ['../client_protobuf.js', 'a load client sending protobuf'],
  pbjson: ['./pbjson.js', 'infer a lossless .proto from your JSON, or check one'],
  merge: ['./merge.js', 'merge client reports from several processes or hosts'],
  'shaping-proxy': ['./shaping-proxy.js', 'a throttling proxy in front of any server']
}

const USAGE = `Usage: ${NAME} <command> [options]   (${NAME} <command> --help for its options)\n\n` +
  Object.entries(COMMANDS).map(([name, [, what]]) => `  ${name.padEnd(16)}${what}`).join('\n') + '\n\n' +
  `Example: ${NAME} compare --tests 3,4\n`

const [command, ...rest] = process.argv.slice(2)
if (command === undefined || command === '--help' || command === '-h') {
  process.stdout.write(USAGE)
  process.exitCode = command === undefined ? 2 : 0
} else if (!Object.hasOwn(COMMANDS, command)) {
  process.stderr.write(`unknown command '${command}': expected one of ${Object.keys(COMMANDS).join(', ')} (see ${NAME} --help)\n`)
  process.exitCode = 2
} else {
  const entry = new URL(COMMANDS[command][0], import.meta.url)
  // The entry point reads process.argv as if it had been run itself.
  process.argv = [process.argv[0], fileURLToPath(entry), ...rest]
  runAs(`${NAME} ${command}`)
  await import(entry)
}
