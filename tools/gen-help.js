#!/usr/bin/env node
// npm run gen:help: writes each command's --help, as its own yargs parser prints it, into
// lib/cli/help/ (see lib/cli/help.js). Run by `npm ci` (prepare); rerun after changing options.
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'
import { HELP_COMMANDS } from '../lib/cli/help.js'

/** How each command's parser is called, with the script name its usage line shows. */
const PARSERS = {
  client_json: ['client-options.js', 'parseClientArgs', 'client_json.js', "'json'"],
  client_protobuf: ['client-options.js', 'parseClientArgs', 'client_protobuf.js', "'protobuf'"],
  client: ['client-options.js', 'parseClientArgs', 'client.js', 'null'],
  server: ['server-options.js', 'parseServerArgs', 'server.js', '{}'],
  compare: ['compare-options.js', 'parseCompareArgs', 'bin/compare.js', ''],
  capacity: ['capacity-options.js', 'parseCapacityArgs', 'bin/capacity.js', ''],
  merge: ['merge-options.js', 'parseMergeArgs', 'bin/merge.js', ''],
  'shaping-proxy': ['proxy-options.js', 'parseProxyArgs', 'bin/shaping-proxy.js', '']
}

/**
 * The help text a command's yargs parser prints, as it would for `node <script> --help` in a
 * pipe, without PORT or BENCH_TOKEN in the environment.
 * @param {string} command
 * @returns {string}
 */
export function yargsHelp (command) {
  const [module, parse, script, extra] = PARSERS[command]
  const code = `import { ${parse} } from './lib/cli/${module}'\n` +
    `await ${parse}([process.execPath, ${JSON.stringify(script)}, '--help']${extra ? `, ${extra}` : ''})`
  const env = { ...process.env }
  delete env.PORT
  delete env.BENCH_TOKEN
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: PROJECT_ROOT, env, encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${command} --help exited with ${run.status}: ${run.stderr}`)
  return run.stdout
}

const isMain = process.argv[1] && path.resolve(process.argv[1]) === path.join(PROJECT_ROOT, 'tools/gen-help.js')
if (isMain) {
  const dir = process.argv[2] ?? path.join(PROJECT_ROOT, 'lib/cli/help')
  fs.mkdirSync(dir, { recursive: true })
  for (const command of HELP_COMMANDS) fs.writeFileSync(path.join(dir, `${command}.txt`), yargsHelp(command))
  process.stdout.write(`wrote ${HELP_COMMANDS.length} help texts to ${path.relative(process.cwd(), dir) || '.'}\n`)
}
