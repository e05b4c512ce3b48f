#!/usr/bin/env node
// npm run test:container: builds the image (deploy/Containerfile) with podman and runs the server
// and both clients in containers on a podman network of their own, read-only and as a non-root
// user, over wss:// with a token, as deploy/kubernetes does (the certificate and key mounted where
// a Secret would be, the clients given only the certificate), printing the clients' results. What
// this machine lacks (a containers.conf, a base image without a registry) deploy/podman-image.js
// makes, and keeps for the next run.
// It removes its containers and network however it ends; images stay, as a cache.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { runMain } from '../lib/errors.js'
import { throwawayCertificate } from '../lib/server/tls.js'
import { buildImage, command, podmanEnvironment } from '../deploy/podman-image.js'

const IMAGE = 'localhost/ws-bench:test'
const MESSAGES = 2000
/** The name the clients connect to, as the Service's in deploy/kubernetes: the certificate is for it. */
const SERVER_NAME = 'ws-bench-server'
/** Where deploy/kubernetes mounts the Secret ws-bench-tls. */
const TLS_DIR = '/etc/ws-bench/tls'

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-container-'))
const env = podmanEnvironment(work)
const network = `ws-bench-test-${process.pid}`
const containers = new Set()
let networkMade = false

runMain(async () => {
  process.once('SIGINT', () => cleanUp().finally(() => process.exit(130)))
  try {
    const started = Date.now()
    await buildImage(IMAGE, { env, work })
    await podman(['network', 'create', network])
    networkMade = true
    const { serverFiles, clientFiles } = await secretFiles()
    const token = ['-e', `BENCH_TOKEN=${process.pid}-${Date.now()}`]
    const server = await run(['-d', ...token, '-v', `${serverFiles}:${TLS_DIR}:ro`, IMAGE,
      'node', 'server.js', '--host', '0.0.0.0', '--tls-cert', `${TLS_DIR}/tls.crt`, '--tls-key', `${TLS_DIR}/tls.key`])
    const host = (await podman(['inspect', '-f', `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`, server])).trim()
    await listening(server)
    const results = {}
    for (const format of ['json', 'protobuf']) {
      const report = JSON.parse(await run([...token, '-v', `${clientFiles}:${TLS_DIR}:ro`, '--add-host', `${SERVER_NAME}:${host}`, IMAGE,
        'node', `client_${format}.js`, '3', String(MESSAGES), '--url', `wss://${SERVER_NAME}:7070`, '--ca', `${TLS_DIR}/ca.crt`, '--json']))
      results[format] = report
      const { messages: m, rate, latencyMs: l, bytes, tls } = report
      console.log(`${format.padEnd(8)} sent ${m.sent}  acked ${m.acked}  errors ${m.errors}  lost ${m.lost}  ${Math.round(rate)} msg/s  ` +
        `p50 ${l.p50} ms  p99 ${l.p99} ms  ${bytes.payloadPerMessage} B/msg  ${tls ? `${tls.version} ${tls.cipher}` : 'NO TLS'}`)
    }
    const complete = Object.values(results).every(({ messages: m, tls }) => m.acked === MESSAGES && m.errors === 0 && m.lost === 0 && tls)
    console.log(`${complete ? 'ok' : 'FAILED'}: server and both clients ran in containers (read-only root, user 1000) over wss:// on network ${network}, ` +
      `${Math.round((Date.now() - started) / 1000)} s`)
    if (!complete) process.exitCode = 1
  } finally {
    await cleanUp()
  }
})

/**
 * The Secret ws-bench-tls as the pods see it: the server's directory with the certificate and its
 * key, the clients' with the certificate alone as ca.crt. Readable by the containers' user 1000.
 */
async function secretFiles () {
  const { cert, key } = await throwawayCertificate([SERVER_NAME])
  const serverFiles = path.join(work, 'server-tls')
  const clientFiles = path.join(work, 'client-tls')
  for (const directory of [serverFiles, clientFiles]) fs.mkdirSync(directory)
  fs.writeFileSync(path.join(serverFiles, 'tls.crt'), cert)
  fs.writeFileSync(path.join(serverFiles, 'tls.key'), key, { mode: 0o400 })
  fs.writeFileSync(path.join(clientFiles, 'ca.crt'), cert)
  for (const file of [serverFiles, path.join(serverFiles, 'tls.key')]) fs.chownSync(file, 1000, 1000)
  return { serverFiles, clientFiles }
}

/** A container on the network, read-only, as the image's user; with -d it runs on and its ID is returned. */
async function run (args) {
  const detached = args[0] === '-d'
  const id = `ws-bench-test-${process.pid}-${containers.size}`
  containers.add(id)
  const output = await podman(['run', ...(detached ? [] : ['--rm']), '--name', id, '--network', network, '--read-only', '--user', '1000:1000', ...args])
  return detached ? id : output
}

/** Resolves once the server container prints that it listens. */
async function listening (id) {
  for (let tries = 0; tries < 100; tries++) {
    if (/listening on wss:\/\//.test(await podman(['logs', id]))) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the server container did not start listening: ${await podman(['logs', id])}`)
}

async function cleanUp () {
  for (const id of containers) await podman(['rm', '-f', '-t', '0', id]).catch(() => {})
  containers.clear()
  if (networkMade) await podman(['network', 'rm', '-f', network]).catch(() => {})
  networkMade = false
  fs.rmSync(work, { recursive: true, force: true })
}

function podman (args) {
  return command('podman', args, { env })
}
