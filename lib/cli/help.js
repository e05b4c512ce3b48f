// Prebuilt --help. `npm run gen:help` (part of npm ci's prepare, beside the protobuf.js code) runs
// each command's own yargs parser with --help and keeps what it prints in lib/cli/help/. A bare
// `--help` then prints that text without loading yargs, whose import alone takes longer than a
// --help is worth. Any other command line, a terminal narrower than the text, or an environment
// that changes the defaults shown (PORT, BENCH_TOKEN) goes to yargs as before.
import { readFileSync } from 'node:fs'
import { dispatched } from './program.js'

/** The commands with prebuilt help, by the name of their help file. */
export const HELP_COMMANDS = Object.freeze(['client_json', 'client_protobuf', 'client', 'server', 'compare', 'capacity', 'merge', 'shaping-proxy'])

/** The width yargs wraps help to when it is not told a terminal's (and the prebuilt text's). */
const HELP_WIDTH = 100

/**
 * Prints a command's prebuilt help when the command line is `--help` (or `-h`) alone.
 * @param {string} command one of HELP_COMMANDS
 * @param {string[]} argv process.argv
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {boolean} true when it printed the help; false: parse the command line as usual
 */
export function printPrebuiltHelp (command, argv, env = process.env) {
  const args = argv.slice(2)
  if (args.length !== 1 || (args[0] !== '--help' && args[0] !== '-h')) return false
  if (process.stdout.isTTY && process.stdout.columns < HELP_WIDTH) return false
  if (env.PORT !== undefined || env.BENCH_TOKEN !== undefined) return false
  // Run as the installed command: yargs prints its usage with that name.
  if (dispatched()) return false
  let text
  try {
    text = readFileSync(new URL(`./help/${command}.txt`, import.meta.url), 'utf8')
  } catch {
    return false // not generated (a checkout without npm ci): yargs prints it
  }
  process.stdout.write(text)
  return true
}
