// Every command README.md and docs/*.md show is one the project's own command-line parsers take:
// the lines of sh/bash/console code blocks (and of unlabelled blocks that start with a command),
// inline `npm run ...`, `node ...`, `npx ...`, `ws-json-vs-protobuf ...` and `pbjson ...` spans,
// and the command printed under each generated table (<!-- results:NAME -->) and in the generated
// list of commands (<!-- commands:all -->). Each is parsed, never run: no server starts, no load
// is sent. A command the parsers refuse fails the suite with the doc, the line and the parser's
// one-line error.
//
// How a command reaches its parser:
// - node server.js, client*.js, bin/*.js: the parser lib/cli exports for that entry point (PARSERS),
//   in this process. The clients' --assert thresholds are parsed too, as the client does before it
//   connects.
// - npm run NAME -- ARGS: NAME must be a script of package.json (ARGS after --, or npm takes them for
//   itself); the script's command, with ARGS appended, is then parsed as if typed.
// - npx BIN, ws-json-vs-protobuf, pbjson: package.json's bin; the dispatcher's commands are read from
//   bin/ws-json-vs-protobuf.js.
// - bench/*.js: a bench that parses with commandLine(process.argv, ...) first thing is imported with
//   lib/cli/parser.js's commandLine wrapped (a module hook, for that import alone) so that its parse
//   settles and nothing after it runs: its own yargs options, strict, without its value checks. A
//   bench that reads no argument takes none. bench:capacity hands its arguments to capacity's parser.
// - tools/docs-results.js and tools/gen-fixtures.js parse with node:util parseArgs first thing and
//   return on --help: run in a child with --help appended (and an empty --root or --dir, in case
//   that ever changes), once per shape of command line. Other scripts: NOT_PARSED says why.
// - BENCH_* and WSBENCH_* settings in front of a command must be read by some code of the project.
// - Other tools' commands (git, tc, podman, curl, redis-server...) and npm's own (ci, install, pack)
//   are not ours: ignored. `ssh HOST "COMMAND"` checks COMMAND.
// Placeholders: an optional [--option] is checked as given; N and P stand for 2; files the reader
// brings (./my-format.js, cert.pem, FILE) are stood in for by ours; a --start-at instant (an
// example date, or $START) is moved an hour ahead, as the parser refuses the past. Any other
// placeholder (<name>, ..., $VAR) fails, unless its line is in SKIPPED with the reason. A span in
// prose with no option that its parser refuses only for missing arguments (`node bin/merge.js`,
// `pbjson check`) names the command rather than showing a line to type: accepted. A refusal that
// is about this machine (too few CPUs for capacity's budget) is a diagnostic, not a failure.
import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { register } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { UsageError, oneLine } from '../../lib/errors.js'
import { throwawayCertificate } from '../../lib/server/tls.js'
import { parseAssertions } from '../../lib/report/assertions.js'
import { parseClientArgs } from '../../lib/cli/client-options.js'
import { parseServerArgs } from '../../lib/cli/server-options.js'
import { parseCompareArgs } from '../../lib/cli/compare-options.js'
import { parseCapacityArgs } from '../../lib/cli/capacity-options.js'
import { parseMergeArgs } from '../../lib/cli/merge-options.js'
import { parsePbjsonArgs } from '../../lib/cli/pbjson-options.js'
import { parseProxyArgs } from '../../lib/cli/proxy-options.js'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
const DOCS = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort()
  .map((f) => `docs/${f}`)]

/** Each entry point's parser: (argv as process.argv, the command's environment) => settles, or throws its refusal. */
const PARSERS = {
  'server.js': (argv, env) => parseServerArgs(argv, env),
  'client.js': async (argv) => parseAssertions((await parseClientArgs(argv, null)).assert),
  'client_json.js': async (argv) => parseAssertions((await parseClientArgs(argv, 'json')).assert),
  'client_protobuf.js': async (argv) => parseAssertions((await parseClientArgs(argv, 'protobuf')).assert),
  'bin/compare.js': (argv) => parseCompareArgs(argv),
  'bin/capacity.js': (argv) => parseCapacityArgs(argv),
  'bin/merge.js': async (argv) => parseAssertions((await parseMergeArgs(argv)).assert),
  'bin/pbjson.js': (argv) => parsePbjsonArgs(argv),
  'bin/shaping-proxy.js': (argv) => parseProxyArgs(argv)
}

/** Scripts that parse with node:util parseArgs before anything else and return on --help, with the
 * option that points them at an empty directory in case they ever went further. */
const HELP_STOPS = { 'tools/docs-results.js': '--root', 'tools/gen-fixtures.js': '--dir' }

/** Scripts whose arguments are not parsed here, and why. */
const NOT_PARSED = {
  'tools/screenshot.js': 'reads process.argv by hand at its top, then opens a browser: nothing to call without it',
  'tools/gen-help.js': 'takes an output directory, read by hand',
  'tools/test-container.js': 'builds and runs a container as soon as it starts',
  'data/generate.js': 'takes an output directory, read by hand',
  'data/corpora.js': 'takes an output directory, read by hand'
}

/** Lines the docs show that are not commands to parse, by doc and exact text, with the reason. */
const SKIPPED = [
  ['README.md', 'npm run bench:*', 'stands for every bench script'],
  ['docs/benchmarks.md', 'npm run bench:*', 'stands for every bench script'],
  ['docs/cli.md', 'npx --package <tarball> ws-json-vs-protobuf ...',
    'the installed command\'s form: any command, from a packed tarball'],
  ['docs/cli.md', 'ws-json-vs-protobuf server|client|client-json|client-protobuf|compare|pbjson|merge|shaping-proxy [options]',
    'the installed command\'s grammar: each command, whose own lines are checked'],
  ['docs/cli.md', 'node client.js --format <name>', 'a heading naming the client: <name> is any format'],
  ['docs/codecs.md', 'npm run compare -- --formats ... --inflight 100', '... stands for the formats of the comparison above'],
  ['docs/benchmarks.md', 'node server.js --processes 2 --broker <each>',
    '<each> stands for each broker of the table, whose runs bench:broker makes'],
  ['docs/benchmarks.md', 'npm run bench:fanout -- --hosts K --subscribers S --rate R --duration D [--cut H@AT+FOR] ' +
    '[--replay N] [--heartbeat T] [--format F] [--test T] [--server-processes P] [--broker ipc|redis|nats] [--json]',
  'the bench\'s usage line'],
  ['docs/method.md', 'npm run compare -- --calibrate [client|server][:µs]',
    'the option\'s grammar; its forms are checked as the docs write them'],
  ['docs/pbjson.md', 'pbjson infer|check', 'names the two commands'],
  ['docs/pbjson.md', 'npm run compare -- --payload <corpus>', 'stands for each corpus, whose commands follow'],
  ['docs/pbjson.md', 'npm run docs:results -- --from-compare compare-report/results.json --name corpus-<name>',
    'stands for each corpus\'s, listed in results.md'],
  ['docs/protocol.md', 'npm run ...', 'any script, in a sentence about wrappers']
]

/**
 * Refusals that only say arguments are missing. A span in prose with no option (`node bin/merge.js`,
 * `pbjson check`, a heading's `node client_json.js`) names the command; it is not a line to type.
 */
const NAMING = /^(Not enough non-option arguments|Missing required arguments?:|name a command|name a test)/

/** Refusals that say what this machine cannot do, not what is wrong with the command. */
const MACHINE_REFUSALS = [/this machine lets us use/, /taskset.*not installed/]

/** The words that start a command of ours. */
const OURS = /^(?:[A-Za-z_]\w*=\S*\s+)*(?:node|npm|npx|ws-json-vs-protobuf|pbjson|ws-bench-merge)\s+\S/
const SHELL_BLOCKS = new Set(['sh', 'bash', 'shell', 'console'])

/**
 * The commands one doc shows.
 * @param {string} doc its path, for the messages
 * @param {string} text its markdown
 * @returns {Array<{doc: string, line: number, text: string, generated?: string}>}
 */
function findCommands (doc, text) {
  const lines = text.split('\n')
  const found = []
  const prose = lines.map(() => '')
  let fence = null
  let region = null
  lines.forEach((line, i) => {
    const marker = /^\s*(`{3,}|~{3,})\s*([\w-]*)/.exec(line)
    if (fence) {
      if (marker && marker[1].startsWith(fence.marker) && !marker[2]) {
        found.push(...blockCommands(doc, fence))
        fence = null
      } else {
        fence.lines.push([i + 1, line])
      }
      return
    }
    const open = /^<!-- (results|help|file|commands):([\w./-]+) -->$/.exec(line.trim())
    if (open) {
      region = { kind: open[1], name: open[2] }
      return
    }
    if (region && line.trim() === `<!-- /${region.kind}:${region.name} -->`) {
      region = null
      return
    }
    if (marker) {
      fence = { marker: marker[1], lang: marker[2], lines: [], region }
      return
    }
    if (region?.kind === 'results') {
      const command = /^`([^`]+)` on \d+ cores?\b/.exec(line)
      if (command) found.push({ doc, line: i + 1, text: command[1], generated: `results:${region.name}` })
      return
    }
    if (!region) prose[i] = line
  })
  // Inline spans, which may run over a line break.
  const masked = prose.join('\n')
  for (const span of masked.matchAll(/(?<!`)(`+)(?!`)([^]*?[^`])\1(?!`)/g)) {
    const content = span[2].replace(/\s*\n\s*/g, ' ').trim()
    if (!OURS.test(content)) continue
    found.push({ doc, line: masked.slice(0, span.index).split('\n').length, text: content, inline: true })
  }
  return found.sort((a, b) => a.line - b.line)
}

/** A code block's commands: every line of a shell block (only its `$ ` lines if it has prompts), or
 * the lines of an unlabelled block that start with a command of ours. */
function blockCommands (doc, { lang, lines, region }) {
  if (region && region.kind !== 'commands') return [] // --help text, a file shown
  if (lang && !SHELL_BLOCKS.has(lang)) return []
  const joined = []
  for (const [line, text] of lines) {
    const previous = joined.at(-1)
    if (previous?.text.endsWith('\\')) previous.text = `${previous.text.slice(0, -1)} ${text.trim()}`
    else joined.push({ line, text: text.trim() })
  }
  const prompted = joined.some(({ text }) => text.startsWith('$ '))
  const generated = region && `${region.kind}:${region.name}`
  return joined
    .filter(({ text }) => text && !text.startsWith('#') && (prompted ? text.startsWith('$ ') : lang || OURS.test(text)))
    .map(({ line, text }) => ({ doc, line, text: prompted ? text.slice(2) : text, ...(generated && { generated }) }))
}

/**
 * Splits a shell line into its simple commands (at &&, ||, ;, | and &), each a list of words; a
 * redirection's file and a comment are dropped. A word knows whether any of it was quoted and
 * whether it holds something only a shell or a reader fills in: $VAR, $(...), <name>.
 * @param {string} text
 * @returns {Array<Array<{text: string, quoted: boolean, unknown: boolean}>>}
 */
function shellCommands (text) {
  const commands = [[]]
  let word = null
  let redirect = false
  const end = () => {
    if (word && !redirect) commands.at(-1).push(word)
    else if (word) redirect = false
    word = null
  }
  const add = (part, quoted = false, unknown = false) => {
    word ??= { text: '', quoted: false, unknown: false }
    word.text += part
    word.quoted ||= quoted
    word.unknown ||= unknown
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    const rest = text.slice(i)
    const fill = /^\$(?:\w+|\{\w+\}|\([^)]*\))|^<[^\s<>]+>/.exec(rest)
    if (fill) {
      add(fill[0], false, true)
      i += fill[0].length - 1
    } else if (c === '\\') {
      add(text[++i] ?? '', true)
    } else if (c === '\'' || c === '"') {
      const close = text.indexOf(c, i + 1)
      if (close < 0) throw new UsageError(`unterminated ${c} in: ${text}`)
      add(text.slice(i + 1, close), true)
      i = close
    } else if (/\s/.test(c)) {
      end()
    } else if (c === '#' && !word) {
      break
    } else if (c === '>' || c === '<') {
      if (word && /^\d$/.test(word.text) && !word.quoted) word = null // 2> file
      end()
      if (text[i + 1] === c) i++
      if (text[i + 1] === '&') i += 2 // 2>&1
      else redirect = true
    } else if ('|&;'.includes(c)) {
      end()
      if (text[i + 1] === c) i++
      commands.push([])
    } else {
      add(c)
    }
  }
  end()
  return commands.filter((words) => words.length > 0)
}

/**
 * The files a reader brings (a certificate, a codec module: ./my-format.js, cert.pem, FILE), which
 * the parsers read, stood in for by ours. A path into the checkout (with a directory) is left to
 * the parser: it must be there.
 * @param {string} option the option the file is given to
 * @param {string} given as the doc writes it
 * @returns {Promise<string>} the file to parse with
 */
let standIns
async function standInFile (option, given) {
  if (!['codec-module', 'tls-cert', 'tls-key', 'ca'].includes(option)) return given
  const brought = given === 'FILE' || (!given.replace(/^\.\//, '').includes('/') && !fs.existsSync(path.join(ROOT, given)))
  if (!brought) return given
  if (option === 'codec-module') {
    // A module that adds the format its file is named for (./my-format.js: my-format), as the docs' example does.
    const format = path.basename(given, '.js').toLowerCase()
    const file = path.join(standIns.dir, `${format}.js`)
    const envelope = pathToFileURL(path.join(ROOT, 'test/fixtures/codecs/json-envelope.js')).href
    fs.writeFileSync(file, `export { binary, codecFor } from ${JSON.stringify(envelope)}\n` +
      `export const format = ${JSON.stringify(format)}\n`)
    return file
  }
  standIns.certificate ??= throwawayCertificate(['127.0.0.1'])
  const certificate = await standIns.certificate
  const file = path.join(standIns.dir, `${option}.pem`)
  fs.writeFileSync(file, option === 'tls-key' ? certificate.key : certificate.cert)
  return file
}

/**
 * A command's words as its program would get them: stand-ins and placeholders filled in, or the
 * placeholder that cannot be.
 * @returns {Promise<{args: string[]}|{placeholder: string}>}
 */
async function argumentsOf (words) {
  const args = []
  for (const word of words) {
    const option = /^--([\w-]+)$/.exec(args.at(-1) ?? '')?.[1]
    let text = word.text
    const past = Date.parse(text) <= Date.now() || Number(text) <= Date.now()
    if (option === 'start-at' && (word.unknown || past)) {
      text = new Date(Date.now() + 3_600_000).toISOString()
    } else if (!word.quoted && /^[NP]$/.test(text) && option) {
      text = '2'
    } else if (option && !word.unknown) {
      text = await standInFile(option, text)
    }
    const placeholder = word.unknown || /^(FILE|NAME|DIR)$|\.\.\.|[[\]]/.test(text)
    if (!word.quoted && placeholder && text === word.text) return { placeholder: text }
    args.push(text)
  }
  return { args }
}

/**
 * Checks one documented line.
 * @param {string} text the command line as the doc shows it
 * @returns {Promise<string|null>} the refusal, one line, or null when every command of ours in it parses
 */
async function checkLine (text) {
  // An optional option, [--compress] or [--codec-module FILE]...: checked as if given.
  const line = text.replace(/\[(--[^[\]]*)\](?:\.\.\.)?/g, '$1')
  for (const words of shellCommands(line)) {
    const refusal = await checkCommand(words)
    if (refusal) return refusal
  }
  return null
}

async function checkCommand (words) {
  const env = {}
  while (words.length > 1 && /^[A-Za-z_]\w*=/.test(words[0].text)) {
    const [name, ...value] = words.shift().text.split('=')
    env[name] = value.join('=')
  }
  if (/^[A-Za-z_]\w*=/.test(words[0].text)) return null // an assignment alone: START=$(date ...)
  for (const name of Object.keys(env)) {
    if (/^(WS)?BENCH_/.test(name) && !projectEnvironment().has(name)) return `${name}: no code of the project reads it`
  }
  const [program, ...rest] = words
  const texts = rest.map((word) => word.text)
  if (program.text === 'ssh') return texts.length > 1 ? checkLine(texts.slice(1).join(' ')) : null // ssh HOST "COMMAND"
  if (!ours(program.text, texts)) return null // another tool's, or npm's own (ci, install, pack)
  const filled = await argumentsOf(rest)
  if (filled.placeholder) {
    return `'${filled.placeholder}' is a placeholder: give a plausible value, or list the line in SKIPPED with why`
  }
  const { args } = filled
  if (program.text === 'node') return nodeCommand(args, env)
  if (program.text === 'npm') return npmCommand(args, env)
  if (program.text === 'npx') return npxCommand(args, env)
  return runScript(PACKAGE.bin[program.text], args, env)
}

/** Whether a command runs something of this project: node, npm run or test, or one of its bins. */
function ours (program, args) {
  if (program === 'node') return true
  if (program === 'npm') return ['run', 'run-script', 'test'].includes(args[0])
  if (program === 'npx') {
    const bin = args.find((arg, i) => !arg.startsWith('-') && !['--package', '-p'].includes(args[i - 1]))
    return Object.hasOwn(PACKAGE.bin, bin)
  }
  return Object.hasOwn(PACKAGE.bin, program)
}

async function nodeCommand (args, env) {
  if (args[0] === '--test') {
    const files = args.slice(1).filter((arg) => !arg.startsWith('-') && !/[*?]/.test(arg))
    const missing = files.filter((file) => !fs.existsSync(path.join(ROOT, file)))
    return missing.length ? `node --test: no such file ${missing.join(', ')}` : null
  }
  if (!args[0] || args[0].startsWith('-')) return `node ${args[0] ?? ''}: not a form this test knows (teach it)`
  return runScript(args[0], args.slice(1), env)
}

async function npmCommand (args, env) {
  const [verb, ...rest] = args
  const run = verb !== 'test'
  const name = run ? rest.shift() : 'test'
  if (name === undefined) return null // lists the scripts
  if (!Object.hasOwn(PACKAGE.scripts, name)) return `npm run ${name}: package.json has no such script`
  if (rest.length && rest[0] !== '--') {
    return `npm run ${name} ${rest[0]}: npm takes ${rest[0]} for itself; the script's arguments go after --`
  }
  const extra = rest.slice(1)
  const script = PACKAGE.scripts[name]
  // server:go, server:java: builds the reference server and execs it with the arguments, which are its own.
  if (/^bin=\$\(node bin\/reference-server\.js \w+\) && exec "\$bin"$/.test(script)) return null
  const [first, ...more] = shellCommands(script)
  if (more.length) {
    return extra.length ? `npm run ${name}: a script of several commands; where its arguments go is not known here` : null
  }
  // The settings, the script's words, then the arguments given after --, already filled in: as npm runs it.
  const filled = (text) => ({ text, quoted: true, unknown: false })
  const settings = Object.entries(env).map(([key, value]) => filled(`${key}=${value}`))
  return checkCommand([...settings, ...first, ...extra.map(filled)])
}

async function npxCommand (args, env) {
  let i = 0
  while (args[i]?.startsWith('-')) i += ['--package', '-p'].includes(args[i]) ? 2 : 1
  const [bin, ...rest] = args.slice(i)
  return runScript(PACKAGE.bin[bin], rest, env)
}

/** bin/ws-json-vs-protobuf.js's commands and their entry points, read from its COMMANDS. */
function dispatcherCommands () {
  const source = fs.readFileSync(path.join(ROOT, 'bin/ws-json-vs-protobuf.js'), 'utf8')
  const commands = Object.fromEntries([...source.matchAll(/^\s+'?([\w-]+)'?: \['(\.\.?\/[\w./-]+)'/gm)]
    .map(([, name, entry]) => [name, path.posix.join('bin', entry)]))
  assert.ok(commands.compare && commands.server, 'bin/ws-json-vs-protobuf.js\'s COMMANDS, as this test reads them')
  return commands
}

async function runScript (given, args, env) {
  const script = path.posix.normalize(given.replace(/^\.\//, ''))
  if (!fs.existsSync(path.join(ROOT, script))) return `no such file: ${script}`
  if (args.includes('--help') || args.includes('-h')) return null // yargs prints the help and exits 0
  if (script === 'bin/ws-json-vs-protobuf.js') {
    const commands = dispatcherCommands()
    const [command, ...rest] = args
    if (command === undefined) return 'ws-json-vs-protobuf without a command prints its usage and exits 2'
    if (!Object.hasOwn(commands, command)) {
      return `unknown command '${command}': expected one of ${Object.keys(commands).join(', ')}`
    }
    return runScript(commands[command], rest, env)
  }
  if (Object.hasOwn(HELP_STOPS, script)) return helpStop(script, args, env)
  if (Object.hasOwn(NOT_PARSED, script)) return null
  const parse = PARSERS[script] ?? (script.startsWith('bench/') ? benchParser(script) : null)
  if (!parse) return `no parser known for ${script}: add it to PARSERS, or to NOT_PARSED with the reason`
  return inProcess(async () => {
    try {
      await parse([process.execPath, path.join(ROOT, script), ...args], env)
      return null
    } catch (err) {
      return err instanceof UsageError ? oneLine(err) : `${err?.name}: ${oneLine(err)}`
    }
  })
}

/** The parses in this process, one at a time: a bench's reads process.argv. */
let turn = Promise.resolve()
function inProcess (parse) {
  const outcome = turn.then(parse)
  turn = outcome.catch(() => {})
  return outcome
}

/**
 * How a bench's arguments are parsed: capacity's parser for bench:capacity (it hands them to
 * bin/capacity.js), the bench's own commandLine for one that parses first thing, none for one that
 * reads no argument.
 * @returns {(argv: string[]) => Promise<void>}
 */
function benchParser (script) {
  const source = fs.readFileSync(path.join(ROOT, script), 'utf8')
  if (/runNodeScript\('bin\/capacity\.js', \[\.\.\.\(?args/.test(source)) return PARSERS['bin/capacity.js']
  const parsesFirst = /^runMain\(async \(\) => \{\n\s+(?:const args = )?await commandLine\(process\.argv,/m
  if (parsesFirst.test(source)) return (argv) => parseBenchArgs(script, argv)
  if (!/process\.argv/.test(source)) {
    return async (argv) => {
      const ignored = argv.slice(2).join(' ')
      if (ignored) throw new UsageError(`${script} reads no arguments (its settings are BENCH_* variables): ${ignored} would be ignored`)
    }
  }
  return async () => { throw new Error(`${script} reads process.argv in a way this test does not know: teach it`) }
}

// A bench parses in its runMain, which goes on to run it. Imported with a query (?parse-only=N), its
// import of lib/cli/parser.js resolves to a module that re-exports the real one but for commandLine,
// whose parseAsync hands its outcome to the test and never settles: the bench stops there.
const PARSED = Symbol.for('docs-commands.parsed')
let benchImports = 0
let hooked = false

function hookBenchParsers () {
  const parserUrl = pathToFileURL(path.join(ROOT, 'lib/cli/parser.js')).href
  const wrapper = `import * as real from ${JSON.stringify(parserUrl)}
export * from ${JSON.stringify(parserUrl)}
export function commandLine (argv, usage) {
  const parser = real.commandLine(argv, usage)
  const parseAsync = parser.parseAsync
  parser.parseAsync = function () {
    const parsed = globalThis[Symbol.for('docs-commands.parsed')]
    parsed.started = true
    return new Promise((resolve) => resolve(parseAsync.call(this)))
      .then(() => parsed.settle(null), (err) => parsed.settle(err))
      .then(() => new Promise(() => {}))
  }
  return parser
}
`
  const hooks = `let parserUrl, wrapperUrl
export function initialize (data) { ({ parserUrl, wrapperUrl } = data) }
export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  const parent = context.parentURL?.startsWith('file:') ? new URL(context.parentURL) : null
  const wrapped = resolved.url === parserUrl && parent?.searchParams.has('parse-only')
  return wrapped ? { url: wrapperUrl, shortCircuit: true } : resolved
}
`
  register(`data:text/javascript,${encodeURIComponent(hooks)}`, {
    data: { parserUrl, wrapperUrl: `data:text/javascript,${encodeURIComponent(wrapper)}` }
  })
  hooked = true
}

async function parseBenchArgs (script, argv) {
  if (!hooked) hookBenchParsers()
  const saved = process.argv
  process.argv = argv
  try {
    const err = await new Promise((resolve, reject) => {
      const parsed = { settle: resolve, started: false }
      globalThis[PARSED] = parsed
      // Its commandLine is called as the module runs: by the time the import is done, the parse is under way.
      import(`${pathToFileURL(path.join(ROOT, script)).href}?parse-only=${++benchImports}`).then(() => {
        if (!parsed.started) reject(new Error(`${script} did not parse its command line as it loaded: teach this test how it does`))
      }, reject)
    })
    if (err) throw err
  } finally {
    process.argv = saved
    delete globalThis[PARSED]
  }
}

const helpStops = new Map()
/** A tool whose parseArgs refuses a bad command line before it looks at --help, run with --help appended. */
function helpStop (script, args, env) {
  // parseArgs reads option names and arity alone: the values do not change its answer.
  const shape = [script, ...args.map((arg) => arg.startsWith('-') ? arg.replace(/=.*/, '=x') : 'x')].join(' ')
  if (!helpStops.has(shape)) {
    const argv = [script, ...args, HELP_STOPS[script], fs.mkdtempSync(path.join(standIns.dir, 'empty-')), '--help']
    const options = { cwd: ROOT, env: { ...process.env, ...env }, timeout: 30_000 }
    helpStops.set(shape, promisify(execFile)(process.execPath, argv, options)
      .then(() => null, (err) => oneLine(err.stderr?.trim() || err.message)))
  }
  return helpStops.get(shape)
}

let environmentNames
/** BENCH_* and WSBENCH_* names some code of the project reads. */
function projectEnvironment () {
  if (environmentNames) return environmentNames
  environmentNames = new Set()
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (/\.(js|mjs|sh)$/.test(entry.name) && path.join(ROOT, file) !== fileURLToPath(import.meta.url)) {
        const source = fs.readFileSync(path.join(ROOT, file), 'utf8')
        for (const [name] of source.matchAll(/\b(?:WS)?BENCH_[A-Z0-9_]+\b/g)) environmentNames.add(name)
      }
    }
  }
  for (const dir of ['bench', 'bin', 'lib', 'tools', 'test', 'data']) walk(dir)
  return environmentNames
}

/**
 * Checks every command of the given docs.
 * @param {Record<string, string>} texts markdown by doc path
 * @returns {Promise<{checked: object[], refusals: string[], machine: string[], skipped: Set<string>}>}
 */
async function checkDocs (texts) {
  const found = Object.entries(texts).flatMap(([doc, text]) => findCommands(doc, text))
  const skipped = new Set()
  const checked = found.filter((command) => {
    const skip = SKIPPED.some(([doc, line]) => doc === command.doc && line === command.text)
    if (skip) skipped.add(`${command.doc}\n${command.text}`)
    return !skip
  })
  // All at once, a line shown twice checked once: the parses in this process take turns
  // (inProcess), the children run beside them.
  const lines = new Map()
  const outcomes = await Promise.all(checked.map(async (command) => {
    if (!lines.has(command.text)) lines.set(command.text, checkLine(command.text).catch((err) => `${err.name}: ${oneLine(err)}`))
    return { command, refusal: await lines.get(command.text) }
  }))
  const refusals = []
  const machine = []
  for (const { command, refusal } of outcomes) {
    if (!refusal) continue
    const where = `${command.doc}:${command.line}: \`${command.text}\``
    if (command.inline && !/\s-/.test(command.text) && NAMING.test(refusal)) continue
    if (MACHINE_REFUSALS.some((pattern) => pattern.test(refusal))) {
      machine.push(`${where}: not judged on this machine: ${refusal}`)
      continue
    }
    const remedy = command.generated
      ? ` (generated by <!-- ${command.generated} --> from docs/results/: re-record the result, the doc follows)`
      : ''
    refusals.push(`${where}\n    ${refusal}${remedy}`)
  }
  return { checked, refusals, machine, skipped }
}

before(() => {
  standIns = { dir: fs.mkdtempSync(path.join(os.tmpdir(), 'docs-commands-')) }
})
after(() => fs.rmSync(standIns.dir, { recursive: true, force: true }))

let results
async function docsChecked () {
  results ??= checkDocs(Object.fromEntries(DOCS.map((doc) => [doc, fs.readFileSync(path.join(ROOT, doc), 'utf8')])))
  return results
}

test('every command README.md and docs/*.md show is taken by its parser', async (t) => {
  const { refusals, machine } = await docsChecked()
  for (const line of machine) t.diagnostic(line)
  if (refusals.length) assert.fail(`${refusals.length} documented command(s) refused:\n${refusals.join('\n')}`)
})

test('commands are found in code blocks, inline spans, under generated tables and in the generated list', async () => {
  const { checked } = await docsChecked()
  const count = (predicate) => checked.filter(predicate).length
  assert.ok(count((c) => !c.inline && !c.generated) >= 40, 'code block lines')
  assert.ok(count((c) => c.inline) >= 100, 'inline spans')
  const tables = DOCS.map((doc) => fs.readFileSync(path.join(ROOT, doc), 'utf8').match(/^<!-- results:[\w./-]+ -->$/gm))
  assert.equal(count((c) => c.generated?.startsWith('results:')), tables.flat().filter(Boolean).length,
    'a command under every generated table')
  assert.ok(count((c) => c.generated?.startsWith('commands:')) >= 30, 'the generated list of commands')
  assert.ok(checked.some((c) => c.doc === 'README.md' && c.text.startsWith('node server.js')), 'README.md: node server.js')
})

test('every line in SKIPPED is still in its doc', async () => {
  const { skipped } = await docsChecked()
  const stale = SKIPPED.filter(([doc, line]) => !skipped.has(`${doc}\n${line}`))
  assert.deepEqual(stale, [], 'no longer in the docs: drop them from SKIPPED')
})

test('the check refuses what the parsers refuse, naming doc, line and error', async () => {
  const doc = [
    'A comparison, `npm run compare -- --tests medium,large -n 60 -w 6`, and:',
    '',
    '```sh',
    'node client_json.js 3 --rate 100 --duration 1s   # fine',
    'npm run compare --tests 3',
    'BENCH_NO_SUCH_SETTING=1 npm run bench:size',
    'npm run bench:fanout -- --hosts 2 --subscribers 100 --nope 1',
    'npx pbjson chek orders.json',
    'node server.js --port <port>',
    '```',
    '',
    '<!-- results:x -->',
    '| a |',
    '',
    '`npm run bench:rate -- --rounds 3` on 2 cores (x), Node v20; 2026-01-01 00:00 UTC, 1.0 s.',
    '<!-- /results:x -->'
  ].join('\n')
  const { refusals } = await checkDocs({ 'docs/x.md': doc })
  const expected = [
    /^docs\/x\.md:1: `npm run compare -- --tests medium,large -n 60 -w 6`\n {4}Unknown argument: w \(see --help\)$/,
    /^docs\/x\.md:5: .*\n {4}npm run compare --tests: npm takes --tests for itself; the script's arguments go after --/,
    /^docs\/x\.md:6: .*\n {4}BENCH_NO_SUCH_SETTING: no code of the project reads it$/,
    /^docs\/x\.md:7: .*\n {4}Unknown argument: nope/,
    /^docs\/x\.md:8: .*\n {4}Unknown arguments?: chek/,
    /^docs\/x\.md:9: .*\n {4}'<port>' is a placeholder/,
    /^docs\/x\.md:15: `npm run bench:rate -- --rounds 3`\n {4}bench\/rate\.js reads no arguments.*\(generated by <!-- results:x/
  ]
  assert.equal(refusals.length, expected.length, refusals.join('\n'))
  refusals.forEach((refusal, i) => assert.match(refusal, expected[i]))
})
