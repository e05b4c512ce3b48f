#!/usr/bin/env node
// Benchmark WebSocket server: decodes JSON or protobuf and replies ACK. Usage: node server.js [options]
import { runServerCli } from './lib/cli/server.js'
import { runMain } from './lib/errors.js'

runMain(() => runServerCli(process.argv, process.env))
