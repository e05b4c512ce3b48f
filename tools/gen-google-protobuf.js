#!/usr/bin/env node
// npm run gen:proto-google [-- --out dir]: google-protobuf code for proto/*.proto, written by
// protoc's own JavaScript generator (--js_out) into vendor/google-protobuf/, committed as code we
// did not write. protoc 3.20 and later no longer contain that generator; PROTOC_JS names one that
// does (`bash .ci/protoc-js.sh` fetches Debian bullseye's protoc 3.12.4).
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { UsageError, runMain } from '../lib/errors.js'

const PROTO_DIR = fileURLToPath(new URL('../proto/', import.meta.url))
// proto3 `optional` is a oneof of one field (that is how descriptors carry it); protoc 3.12's JS
// generator predates the keyword, so it is handed the equivalent oneof: same wire, same presence.
const PROTO3_OPTIONAL = /^(\s*)optional\s+(\S+)\s+(\w+)\s*=\s*(\d+)([^;]*);/gm

/**
 * A proto3 file's text with every `optional` field written as its synthetic oneof.
 * @param {string} text .proto source
 * @returns {string}
 */
function withSyntheticOneofs (text) {
  if (!/^\s*syntax\s*=\s*"proto3"/m.test(text)) return text
  return text.replace(PROTO3_OPTIONAL, '$1oneof _$3 { $2 $3 = $4$5; }')
}

function run (protoc, args) {
  const result = spawnSync(protoc, args, { encoding: 'utf8' })
  if (result.error) throw new UsageError(`cannot run ${protoc}: ${result.error.code ?? result.error.message}; set PROTOC_JS to a protoc with --js_out (bash .ci/protoc-js.sh fetches one)`)
  return result
}

runMain(async () => {
  const outIndex = process.argv.indexOf('--out')
  const out = path.resolve(outIndex > 0 ? process.argv[outIndex + 1] : fileURLToPath(new URL('../vendor/google-protobuf/', import.meta.url)))
  const protoc = process.env.PROTOC_JS || 'protoc'
  if (!run(protoc, ['--help']).stdout.includes('--js_out')) {
    throw new UsageError(`${protoc} has no JavaScript generator (--js_out; protoc 3.20 and later moved it out): set PROTOC_JS to one that has (bash .ci/protoc-js.sh fetches one)`)
  }
  const sources = fs.mkdtempSync(path.join(os.tmpdir(), 'proto-google-'))
  try {
    const files = fs.readdirSync(PROTO_DIR).filter((name) => name.endsWith('.proto')).sort()
    for (const file of files) fs.writeFileSync(path.join(sources, file), withSyntheticOneofs(fs.readFileSync(path.join(PROTO_DIR, file), 'utf8')))
    fs.rmSync(out, { recursive: true, force: true })
    fs.mkdirSync(out, { recursive: true })
    const result = run(protoc, [`--js_out=import_style=commonjs,binary:${out}`, `-I${sources}`, ...files.map((file) => path.join(sources, file))])
    if (result.status !== 0) throw new UsageError(`protoc failed: ${result.stderr.trim().split('\n')[0]}`)
    // The generated files are CommonJS inside an ESM package.
    fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "commonjs" }\n')
  } finally {
    fs.rmSync(sources, { recursive: true, force: true })
  }
})
