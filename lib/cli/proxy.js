// The standalone shaping proxy's command (bin/shaping-proxy.js), for shaping any TCP client.
import { printPrebuiltHelp } from './help.js'

/**
 * Runs the shaping proxy on its own until SIGINT or SIGTERM, for shaping any TCP client.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code
 */
export async function runShapingProxyCli (argv) {
  if (printPrebuiltHelp('shaping-proxy', argv)) return 0
  const { parseProxyArgs } = await import('./proxy-options.js')
  const { listenHost, listenPort, targetHost, targetPort, network } = await parseProxyArgs(argv)
  const { startShapingProxy } = await import('../network/proxy.js')
  const { up, down, rtt } = network
  const proxy = await startShapingProxy({ listenHost, listenPort, targetHost, targetPort, up, down, rtt })
  process.stdout.write(`shaping proxy on ${proxy.host}:${proxy.port} -> ${targetHost}:${targetPort} ` +
    `(${network.profile}: up ${network.up} kbit/s, down ${network.down} kbit/s, rtt ${network.rtt} ms)\n`)
  await new Promise((resolve) => { process.once('SIGINT', resolve); process.once('SIGTERM', resolve) })
  await proxy.close()
  return 0
}
