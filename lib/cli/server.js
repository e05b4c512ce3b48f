// The server's command (server.js): listen until SIGINT or SIGTERM, with summary lines on stdout.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { printPrebuiltHelp } from './help.js'

/**
 * Runs the server for `node server.js`: prints `listening on ws://HOST:PORT` once it accepts
 * connections, a summary line every few seconds while busy, and a final one when SIGINT or SIGTERM
 * closes it. With --processes above 1 this process is the cluster's primary, and its lines sum the
 * workers'; a worker that dies stops the server with exit code 1.
 * @param {string[]} argv process.argv
 * @param {NodeJS.ProcessEnv} env PORT and BENCH_TOKEN
 * @returns {Promise<number>} exit code once stopped
 */
export async function runServerCli (argv, env) {
  if (printPrebuiltHelp('server', argv, env)) return 0
  const { parseServerArgs } = await import('./server-options.js')
  const options = await parseServerArgs(argv, env)
  const { megabytes } = await import('../server/stats.js')
  const log = (line) => process.stdout.write(`${line}\n`)
  const server = options.processes > 1
    ? await (await import('../server/cluster.js')).startCluster({ ...options, log })
    : await (await import('../server/server.js')).startServer({ ...options, log })
  if (!['127.0.0.1', '::1', 'localhost'].includes(options.host)) {
    const who = options.token ? 'anyone who can reach it and has the token' : 'anyone who can reach it (set --token or BENCH_TOKEN)'
    const clear = options.token && !options.tls ? '; the token crosses the network in clear (serve TLS: --tls-cert and --tls-key)' : ''
    process.stderr.write(`warning: listening on ${options.host}: ${who} can connect${clear}\n`)
  }
  const where = options.processes > 1 ? `, ${options.processes} worker processes` : ''
  // Before the listening line, which scripts wait for: by then the file is there.
  const certificateFile = options.tls?.throwaway ? writeThrowaway(options.tls) : null
  if (certificateFile) log(`throwaway certificate ${certificateFile} (SHA-256 ${options.tls.fingerprint}): clients trust it with --ca ${certificateFile}, or skip the check with --insecure`)
  // Listened for before the listening line: a starter may send SIGTERM as soon as it reads it.
  const stopping = new Promise((resolve) => {
    process.once('SIGINT', () => resolve({ signal: 'SIGINT' }))
    process.once('SIGTERM', () => resolve({ signal: 'SIGTERM' }))
    server.lost.then((failure) => resolve({ failure }))
  })
  log(`listening on ${server.url} (rss ${megabytes(process.memoryUsage.rss())} MB${where})`)
  const startedAt = Date.now()
  const stopped = await stopping
  if (certificateFile) fs.rmSync(path.dirname(certificateFile), { recursive: true, force: true })
  if (stopped.failure) process.stderr.write(`error: ${stopped.failure}${options.processes > 1 ? '; stopping the others' : ''}\n`)
  await server.close()
  log(`stopped ${stopped.failure ? 'by a failure' : `on ${stopped.signal}`} after ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ` +
    `${server.stats.totalConnections} connections served, ${server.stats.countsLine()}`)
  return stopped.failure ? 1 : 0
}

/** A throwaway certificate's PEM in a directory of its own, for clients' --ca; removed when the server stops. */
function writeThrowaway ({ cert }) {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-tls-')), 'cert.pem')
  fs.writeFileSync(file, cert)
  return file
}
