#!/usr/bin/env node
// Builds the Go server (servers/go/) when its sources changed, and prints its binary's path, for
// `npm run server:go`, which then execs it: the server process is the Go binary itself, with no
// node or npm wrapper holding its CPU (servers/go/README.md).
import { buildGoServer } from '../lib/server/go.js'

try {
  process.stdout.write(`${buildGoServer({ output: 'inherit', force: process.argv.includes('--force') })}\n`)
} catch (err) {
  process.stderr.write(`${err.message}\n`)
  process.exit(2)
}
