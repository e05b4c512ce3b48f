// The standalone shaping proxy's command line (bin/shaping-proxy.js).
import { UsageError } from '../errors.js'
import { PROFILES, resolveNetwork } from '../network/profiles.js'
import { commandLine, hostAndPort } from './parser.js'
import { programName } from './program.js'

/**
 * Parses the standalone shaping proxy's command line.
 * @param {string[]} argv process.argv
 * @returns {Promise<{listenHost: string, listenPort: number, targetHost: string, targetPort: number, network: object}>}
 */
export async function parseProxyArgs (argv) {
  const program = programName('node bin/shaping-proxy.js')
  const args = await commandLine(argv, `Usage: ${program} --listen <port> --target <host:port> [--throttle <profile>] [--up --down --rtt]\n\n` +
    'A TCP proxy that delays each direction by rtt/2 and limits its bandwidth.')
    .options({
      listen: { describe: 'port (or host:port) to listen on', type: 'string', demandOption: true },
      target: { describe: 'host:port to forward to', type: 'string', demandOption: true },
      throttle: { describe: `profile: ${Object.keys(PROFILES).join(', ')}`, type: 'string' },
      up: { describe: 'client-to-server kbit/s', type: 'string' },
      down: { describe: 'server-to-client kbit/s', type: 'string' },
      rtt: { describe: 'round trip to add, ms', type: 'string' }
    })
    .example(`${program} --listen 7071 --target 127.0.0.1:7070 --throttle 3g`, 'then point a client at ws://127.0.0.1:7071')
    .parseAsync()
  const [listenHost, listenPort] = hostAndPort(args.listen, '127.0.0.1')
  const [targetHost, targetPort] = hostAndPort(args.target, '127.0.0.1')
  const network = resolveNetwork({ profile: args.throttle, up: args.up, down: args.down, rtt: args.rtt })
  if (!network) throw new UsageError('give a --throttle profile or --up/--down/--rtt')
  return { listenHost, listenPort, targetHost, targetPort, network }
}
