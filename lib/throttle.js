import { execFile } from 'node:child_process'
import os from 'node:os'
import { promisify } from 'node:util'
import { UsageError } from './errors.js'
import { startShapingProxyWorker } from './shaping-proxy.js'

const run = promisify(execFile)

/** The network profiles of @sitespeed.io/throttle: kbit/s up and down, round trip in ms. */
export const PROFILES = Object.freeze({
  '3g': { up: 768, down: 1600, rtt: 150 },
  '3gfast': { up: 768, down: 1600, rtt: 75 },
  '3gslow': { up: 400, down: 400, rtt: 200 },
  '2g': { up: 256, down: 280, rtt: 400 },
  cable: { up: 1000, down: 5000, rtt: 14 },
  dsl: { up: 384, down: 1500, rtt: 25 },
  '3gem': { up: 400, down: 400, rtt: 200 },
  '4g': { up: 9000, down: 9000, rtt: 85 },
  lte: { up: 12000, down: 12000, rtt: 35 },
  edge: { up: 200, down: 240, rtt: 420 },
  dial: { up: 30, down: 49, rtt: 60 },
  fois: { up: 5000, down: 20000, rtt: 2 }
})

/** Backends a user may ask for. */
export const BACKENDS = Object.freeze(['auto', 'tc', 'proxy'])

/** Without a bandwidth limit the link is fast enough not to matter next to loopback. */
const UNLIMITED_KBITS = 10_000_000

/**
 * Works out the network a run asked for: a profile, custom values, or a profile with overrides.
 * @param {{throttle?: string, up?: number, down?: number, rtt?: number, loss?: number}} options
 * @returns {null | {profile: string, up: number, down: number, rtt: number, loss: number}} null: no shaping
 * @throws {UsageError} for an unknown profile or a value out of range
 */
export function resolveNetwork ({ throttle, up, down, rtt, loss } = {}) {
  const custom = { up, down, rtt, loss }
  const asked = Object.entries(custom).filter(([, value]) => value !== undefined)
  if ((throttle === undefined || throttle === 'none') && asked.length === 0) return null
  let base = { up: UNLIMITED_KBITS, down: UNLIMITED_KBITS, rtt: 0 }
  if (throttle !== undefined && throttle !== 'none') {
    base = PROFILES[String(throttle).toLowerCase()]
    if (!base) throw new UsageError(`unknown --throttle '${throttle}': expected none or one of ${Object.keys(PROFILES).join(', ')}`)
  }
  for (const [name, value] of asked) {
    const number = Number(value)
    const valid = name === 'loss' ? number >= 0 && number <= 100 : name === 'rtt' ? number >= 0 : number > 0
    if (!Number.isFinite(number) || !valid) {
      throw new UsageError(`--${name} must be ${name === 'loss' ? 'a percentage from 0 to 100' : name === 'rtt' ? 'a number of ms >= 0' : 'a positive number of kbit/s'}, got '${value}'`)
    }
  }
  const profile = throttle !== undefined && throttle !== 'none' && asked.length === 0 ? String(throttle).toLowerCase() : 'custom'
  return {
    profile,
    up: Number(up ?? base.up),
    down: Number(down ?? base.down),
    rtt: Number(rtt ?? base.rtt),
    loss: Number(loss ?? 0)
  }
}

/**
 * Why kernel shaping cannot work on this machine, or null when it can: it needs Linux or macOS,
 * root or sudo, and (on Linux) the netem qdisc.
 * @returns {Promise<string|null>}
 */
export async function tcUnavailableReason () {
  const platform = os.platform()
  if (platform !== 'linux' && platform !== 'darwin') return `kernel shaping is not supported on ${platform}`
  const isRoot = process.getuid?.() === 0
  if (!isRoot && !(await succeeds('sudo', ['-n', 'true']))) return 'kernel shaping needs root or passwordless sudo'
  if (platform === 'linux' && !(await succeeds('modprobe', ['-n', '-q', 'sch_netem']))) {
    return 'the netem qdisc (sch_netem) is not available in this kernel'
  }
  return null
}

async function succeeds (command, args) {
  try {
    await run(command, args, { timeout: 5000 })
    return true
  } catch {
    return false
  }
}

/**
 * Applies a network for the run and says where the client must connect.
 * @param {{profile: string, up: number, down: number, rtt: number, loss: number}} network from resolveNetwork
 * @param {{backend?: string, target: {host: string, port: number}}} options target: the real server
 * @returns {Promise<{backend: 'tc'|'proxy', host: string, port: number, reason: string, stop: () => Promise<void>}>}
 */
export async function startThrottle (network, { backend = 'auto', target }) {
  if (!BACKENDS.includes(backend)) throw new UsageError(`unknown --throttle-backend '${backend}': expected one of ${BACKENDS.join(', ')}`)
  const unavailable = backend === 'proxy' ? 'proxy asked for' : await tcUnavailableReason()
  if (backend === 'tc' && unavailable) {
    throw new UsageError(`--throttle-backend tc cannot work here: ${unavailable}; use --throttle-backend proxy`)
  }
  if (!unavailable) return startKernelShaping(network, target, backend)
  if (network.loss > 0) {
    throw new UsageError('--loss needs kernel shaping (--throttle-backend tc): TCP through a userspace proxy hides loss' +
      (backend === 'auto' ? ` (tc unavailable: ${unavailable})` : ''))
  }
  const proxy = await startShapingProxyWorker({ targetHost: target.host, targetPort: target.port, up: network.up, down: network.down, rtt: network.rtt })
  return {
    backend: 'proxy',
    host: proxy.host,
    port: proxy.port,
    reason: backend === 'auto' ? `auto: tc unavailable (${unavailable}), using the userspace proxy` : 'userspace shaping proxy',
    stop: once(() => proxy.close())
  }
}

/**
 * tc netem through @sitespeed.io/throttle, undone by stop() and on SIGTERM. SIGINT belongs to the
 * client: it stops the run, prints the partial report and then calls stop().
 */
async function startKernelShaping (network, target, backend) {
  const throttle = await import('@sitespeed.io/throttle')
  // A loopback server is reached over `lo`, where the library shapes the delay only.
  const localhost = ['127.0.0.1', 'localhost', '::1'].includes(target.host)
  const options = localhost
    ? { localhost: true, rtt: Math.round(network.rtt) }
    : { up: Math.round(network.up), down: Math.round(network.down), rtt: Math.round(network.rtt), packetLoss: network.loss || undefined }
  const stop = once(async () => {
    process.off('SIGTERM', onSignal)
    await throttle.stop(localhost ? { localhost: true } : {})
  })
  const onSignal = (signal) => stop().finally(() => process.kill(process.pid, signal))
  process.once('SIGTERM', onSignal)
  try {
    await throttle.start(options)
  } catch (err) {
    await stop().catch(() => {})
    throw new UsageError(`kernel shaping failed (${String(err.message ?? err).split('\n')[0]}); nothing is left applied; try --throttle-backend proxy`)
  }
  return { backend: 'tc', host: target.host, port: target.port, reason: `${backend === 'auto' ? 'auto: kernel shaping available, using tc' : 'kernel shaping (tc)'}${localhost ? ' on lo: delay only, @sitespeed.io/throttle does not limit loopback bandwidth' : ''}`, stop }
}

function once (fn) {
  let result
  return () => { result ??= fn(); return result }
}
