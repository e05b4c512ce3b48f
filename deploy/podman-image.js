// The project's image (deploy/Containerfile) built with podman, on a machine that may have no image
// registry: what npm run test:container and npm run bench:kubernetes share. What this kind of
// machine lacks is made here and kept for the next run: a containers.conf for podman's calls (runc,
// explicit open-file limits), and a node:20-slim base image from a Debian rootfs with this
// machine's Node when none can be pulled.
import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'
import { UsageError } from '../lib/errors.js'

const BASE = 'node:20-slim'
/** An image pull that has not answered by then will not: no registry is reachable. */
const PULL_TIMEOUT_MS = 20_000
/** Podman's engine settings here: crun refuses this kind of machine's cgroups; root cannot raise open files past 20000. */
const CONTAINERS_CONF = '[engine]\nruntime = "runc"\n\n[containers]\ndefault_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n'
/**
 * The host's trust store and npm configuration (its cafile), mounted into the build steps that reach
 * the registry, never into the image: the npmrc as root's own, which npm reads whatever its --prefix.
 */
const BUILD_MOUNTS = [['/etc/ssl/certs/ca-certificates.crt', '/etc/ssl/certs/ca-certificates.crt'], ['/usr/local/etc/npmrc', '/root/.npmrc']]

/**
 * The environment for podman's calls: CONTAINERS_CONF names a containers.conf written into `work`.
 * @param {string} work a directory of this run's own
 * @returns {NodeJS.ProcessEnv}
 */
export function podmanEnvironment (work) {
  const file = path.join(work, 'containers.conf')
  fs.writeFileSync(file, CONTAINERS_CONF)
  return { ...process.env, CONTAINERS_CONF: file }
}

/**
 * Builds deploy/Containerfile as `tag`, after making sure its base image is there.
 * @param {string} tag e.g. localhost/ws-bench:test
 * @param {{env: NodeJS.ProcessEnv, work: string}} options podman's environment, and a directory for the base image's rootfs
 * @throws {UsageError} when podman (or, without a registry, mmdebstrap) is missing
 */
export async function buildImage (tag, { env, work }) {
  if (spawnSync('podman', ['--version'], { stdio: 'ignore' }).status !== 0) throw new UsageError('podman not found: apt-get install podman runc (and mmdebstrap, for a base image without a registry)')
  await baseImage({ env, work })
  step(`building ${tag} from deploy/Containerfile`)
  const mounts = BUILD_MOUNTS.filter(([file]) => fs.existsSync(file)).flatMap(([file, inside]) => ['-v', `${file}:${inside}:ro`])
  await command('podman', ['build', '--pull=never', ...mounts, '-f', 'deploy/Containerfile', '-t', tag, '.'], { env, cwd: PROJECT_ROOT, show: true, finish: true })
}

/** node:20-slim: there already, pulled, or made from a Debian rootfs with this machine's Node and npm. */
async function baseImage ({ env, work }) {
  if (spawnSync('podman', ['image', 'exists', BASE], { env }).status === 0) return
  step(`pulling ${BASE}`)
  const pulled = await command('podman', ['pull', BASE], { env, timeoutMs: PULL_TIMEOUT_MS }).then(() => true, () => false)
  if (pulled) return
  if (spawnSync('mmdebstrap', ['--version'], { stdio: 'ignore' }).status !== 0) throw new UsageError(`${BASE} cannot be pulled and mmdebstrap is not here to make it: apt-get install mmdebstrap`)
  step(`no registry: making ${BASE} from a Debian rootfs (minbase) with this machine's Node ${process.version}`)
  const node = process.execPath
  const npm = path.dirname(path.dirname(fs.realpathSync(spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim())))
  const rootfs = path.join(work, 'rootfs.tar')
  await command('mmdebstrap', ['--variant=minbase', '--include=libstdc++6,ca-certificates', '--quiet',
    `--customize-hook=copy-in ${node} /usr/local/bin`,
    '--customize-hook=mkdir -p "$1/usr/local/lib/node_modules"',
    `--customize-hook=copy-in ${npm} /usr/local/lib/node_modules`,
    '--customize-hook=chroot "$1" ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm',
    '--customize-hook=chroot "$1" ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
    '--customize-hook=chroot "$1" useradd --uid 1000 --create-home node',
    debianSuite(), rootfs], { env, show: true })
  await command('podman', ['import', '--change', 'CMD ["node"]', rootfs, BASE], { env })
  fs.rmSync(rootfs, { force: true })
}

/** This machine's Debian release (bookworm where /etc/os-release does not say). */
function debianSuite () {
  return /VERSION_CODENAME=(\w+)/.exec(fs.readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'bookworm'
}

/**
 * One line of progress on stderr.
 * @param {string} text
 */
export function step (text) {
  console.error(`# ${text}`)
}

/** The programs command() is running now, for stopCommands(): those it may stop, and the runs of those it lets finish. */
const running = new Set()
const finishing = new Set()

/**
 * Ends every program command() is running (SIGTERM), and waits for those started with `finish`:
 * an interrupted run stops what it waits for before it tears down.
 * @returns {Promise<void>}
 */
export async function stopCommands () {
  for (const child of running) child.kill('SIGTERM')
  if (finishing.size) step('waiting for the image build to finish (an interrupted podman build leaves its working containers behind)')
  await Promise.allSettled(finishing)
}

/**
 * Runs a program; resolves with its stdout, rejects with one line (its last line of stderr).
 * @param {string} program
 * @param {string[]} args
 * @param {{env?: NodeJS.ProcessEnv, cwd?: string, show?: boolean, timeoutMs?: number, finish?: boolean}} [options]
 *   show copies its output to stderr as it comes; after timeoutMs it is killed; with finish, neither
 *   stopCommands() nor a Ctrl-C (its own process group) stops it: they wait for it
 * @returns {Promise<string>}
 */
export function command (program, args, { env = process.env, cwd, show = false, timeoutMs, finish = false } = {}) {
  const run = new Promise((resolve, reject) => {
    const child = spawn(program, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: finish })
    if (!finish) running.add(child)
    let stdout = ''
    let stderr = ''
    const timer = timeoutMs && setTimeout(() => child.kill('SIGKILL'), timeoutMs)
    child.stdout.on('data', (chunk) => { stdout += chunk; if (show) process.stderr.write(chunk) })
    child.stderr.on('data', (chunk) => { stderr += chunk; if (show) process.stderr.write(chunk) })
    child.on('error', (err) => { running.delete(child); reject(err) })
    child.on('close', (code) => {
      running.delete(child)
      clearTimeout(timer)
      if (code === 0) return resolve(stdout)
      const last = stderr.trim().split('\n').pop() || `exit ${code}`
      reject(new Error(`${path.basename(program)} ${args[0]} failed: ${last}`))
    })
  })
  if (finish) {
    finishing.add(run)
    run.catch(() => {}).finally(() => finishing.delete(run))
  }
  return run
}
