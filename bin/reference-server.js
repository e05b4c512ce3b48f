#!/usr/bin/env node
// node bin/reference-server.js NAME [--force]: builds the reference server in servers/NAME/ when its
// sources changed, and prints the program that runs it, for `npm run server:NAME`, which then execs
// it: the server process is the server itself, with no node or npm wrapper holding its CPU
// (docs/protocol.md, "CPU"). The build's own output goes to stderr: stdout is the program's path alone.
import { REFERENCE_SERVER_NAMES, buildReferenceServer } from '../lib/reference/servers.js'

const [name] = process.argv.slice(2).filter((arg) => arg !== '--force')
try {
  if (!name) throw new Error(`usage: node bin/reference-server.js NAME [--force], NAME one of ${REFERENCE_SERVER_NAMES.join(', ')}`)
  process.stdout.write(`${buildReferenceServer(name, { output: 'stderr', force: process.argv.includes('--force') })}\n`)
} catch (err) {
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
}
