#!/usr/bin/env node
// npm run test:container: builds the image (deploy/Containerfile) with podman and runs the server
// and both clients in containers on a podman network of their own, read-only and as a non-root
// user, over wss:// with a token, as deploy/kubernetes does (the certificate and key mounted where
// a Secret would be, the clients given only the certificate), printing the clients' results. What this machine lacks it makes itself, and keeps for the
// next run: a containers.conf for this run's podman calls (runc, explicit open-file limits), and a
// node:20-slim base image from a Debian rootfs with this machine's Node when none can be pulled.
// It removes its containers and network however it ends; images stay, as a cache.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'
import { runMain, UsageError } from '../lib/errors.js'
import { throwawayCertificate } from '../lib/server/tls.js'

const BASE = 'node:20-slim'
const IMAGE = 'localhost/ws-bench:test'
const MESSAGES = 2000
/** The name the clients connect to, as the Service's in deploy/kubernetes: the certificate is for it. */
const SERVER_NAME = 'ws-bench-server'
/** Where deploy/kubernetes mounts the Secret ws-bench-tls. */
const TLS_DIR = '/etc/ws-bench/tls'
/** An image pull that has not answered by then will not: no registry is reachable. */
const PULL_TIMEOUT_MS = 20_000
/** Podman's engine settings here: crun refuses this kind of machine's cgroups; root cannot raise open files past 20000. */
const CONTAINERS_CONF = '[engine]\nruntime = "runc"\n\n[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n'
/**
 * The host's trust store and npm configuration (its cafile), mounted into the build steps that reach
 * the registry, never into the image: the npmrc as root's own, which npm reads whatever its --prefix.
 */
const BUILD_MOUNTS = [['/etc/ssl/certs/ca-certificates.crt', '/etc/ssl/certs/ca-certificates.crt'], ['/usr/local/etc/npmrc', '/root/.npmrc']]

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-container-'))
const env = { ...process.env, CONTAINERS_CONF: path.join(work, 'containers.conf') }
const network = `ws-bench-test-${process.pid}`
const containers = new Set()
let networkMade = false

runMain(async () => {
  process.once('SIGINT', () => cleanUp().finally(() => process.exit(130)))
  try {
    const started = Date.now()
    if (spawnSync('podman', ['--version'], { stdio: 'ignore' }).status !== 0) throw new UsageError('podman not found: apt-get install podman runc (and mmdebstrap, for a base image without a registry)')
    fs.writeFileSync(env.CONTAINERS_CONF, CONTAINERS_CONF)
    await baseImage()
    step(`building ${IMAGE} from deploy/Containerfile`)
    const mounts = BUILD_MOUNTS.filter(([file]) => fs.existsSync(file)).flatMap(([file, inside]) => ['-v', `${file}:${inside}:ro`])
    await podman(['build', '--pull=never', ...mounts, '-f', 'deploy/Containerfile', '-t', IMAGE, '.'], { cwd: PROJECT_ROOT, show: true })
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

/** node:20-slim: there already, pulled, or made from a Debian rootfs with this machine's Node and npm. */
async function baseImage () {
  if (spawnSync('podman', ['image', 'exists', BASE], { env }).status === 0) return
  step(`pulling ${BASE}`)
  const pulled = await podman(['pull', BASE], { timeoutMs: PULL_TIMEOUT_MS }).then(() => true, () => false)
  if (pulled) return
  if (spawnSync('mmdebstrap', ['--version'], { stdio: 'ignore' }).status !== 0) throw new UsageError(`${BASE} cannot be pulled and mmdebstrap is not here to make it: apt-get install mmdebstrap`)
  step(`no registry: making ${BASE} from a Debian rootfs (minbase) with this machine's Node ${process.version}`)
  const node = process.execPath
  const npm = path.dirname(path.dirname(fs.realpathSync(spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim())))
  const rootfs = path.join(work, 'rootfs.tar')
  const suite = /VERSION_CODENAME=(\w+)/.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'bookworm'
  await command('mmdebstrap', ['--variant=minbase', '--include=libstdc++6,ca-certificates', '--quiet',
    `--customize-hook=copy-in ${node} /usr/local/bin`,
    '--customize-hook=mkdir -p "$1/usr/local/lib/node_modules"',
    `--customize-hook=copy-in ${npm} /usr/local/lib/node_modules`,
    '--customize-hook=chroot "$1" ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
    '--customize-hook=chroot "$1" ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
    '--customize-hook=chroot "$1" useradd --uid 1000 --create-home node',
    suite, rootfs], { show: true })
  await podman(['import', '--change', 'CMD ["node"]', rootfs, BASE])
}

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

function step (text) {
  console.error(`# ${text}`)
}

function podman (args, options = {}) {
  return command('podman', args, options)
}

/** Runs a program; resolves with its stdout, rejects with one line (its last line of stderr). */
function command (program, args, { cwd, show = false, timeoutMs } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const timer = timeoutMs && setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (chunk) => { stdout += chunk; if (show) process.stderr.write(chunk) })
    child.stderr.on('data', (chunk) => { stderr += chunk; if (show) process.stderr.write(chunk) })
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      if (code === 0) return resolve(stdout)
      const last = stderr.trim().split('\n').pop() || `exit ${code}`
      reject(new Error(`${program} ${args[0]} failed: ${last}`))
    })
  })
}
