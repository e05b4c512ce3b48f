#!/usr/bin/env node
// Load client for any wire format the server knows (json, protobuf, protobuf-es, fast-json,
// msgpack, cbor, avro). Usage: node client.js --format <name> <test> [messages] [options]
import { runClientCli } from './lib/cli/client.js'
import { runMain } from './lib/errors.js'

runMain(() => runClientCli(null, process.argv))
