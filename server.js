#!/usr/bin/env node
// Benchmark WebSocket server: decodes JSON or protobuf and replies ACK. Usage: node server.js [options]
import { serveUntilSignal } from './lib/server.js'
import { parseServerArgs } from './lib/options.js'
import { runMain } from './lib/errors.js'

runMain(async () => serveUntilSignal(await parseServerArgs(process.argv, process.env)))
