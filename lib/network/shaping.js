// Applying a network to a run: kernel shaping (tc netem through @sitespeed.io/throttle) where it
// can work, else the userspace shaping proxy in a worker thread.
import { execFile } from 'node:child_process'
import os from 'node:os'
import { promisify } from 'node:util'
import { UsageError } from '../errors.js'
import { startShapingProxyWorker } from './proxy.js'
import { BACKENDS } from './profiles.js'

const run = promisify(execFile)

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
export async function startShaping (network, { backend = 'auto', target }) {
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
  const { up, down, rtt } = network
  const proxy = await startShapingProxyWorker({ targetHost: target.host, targetPort: target.port, up, down, rtt })
  return {
    backend: 'proxy',
    host: proxy.host,
    port: proxy.port,
    // Said in every report: N connections are N users on such a network, not one link shared by N.
    reason: `${backend === 'auto' ? `auto: tc unavailable (${unavailable}), using the userspace proxy` : 'userspace shaping proxy'}` +
      ', each connection a link of its own',
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
    : {
        up: Math.round(network.up),
        down: Math.round(network.down),
        rtt: Math.round(network.rtt),
        packetLoss: network.loss || undefined
      }
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
