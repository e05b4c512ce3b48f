// npm run bench:shaping-check — does the userspace shaping proxy shape like the kernel does?
// On test hosts (lib/network/hosts.js), the same bulk transfer from a client host to a server
// host, limited once by the kernel (tbf on the client host's veth) and once by the shaping proxy
// (bin/shaping-proxy.js, in the client host) at the same rate; achieved rates side by side.
// The kernel counts every byte of every packet (Ethernet, IP and TCP headers, ~4.4% of a full
// segment) against the rate; the proxy counts payload bytes; both are shown.
import { once } from 'node:events'
import { runMain, UsageError } from '../lib/errors.js'
import { createTestHosts, hostsUnavailableReason } from '../lib/network/hosts.js'
import { watchOutput } from '../lib/processes.js'
import { printRow, startResults } from './support/results.js'

const RATES_KBIT = (process.env.BENCH_RATES ?? '1000,4000,16000').split(',').map(Number)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 6)
const SINK_PORT = 9000
const PROXY_PORT = 9001
// Per full 1448-byte TCP segment: 14 Ethernet + 20 IP + 32 TCP (with timestamps) bytes of headers.
const WIRE_PER_PAYLOAD = (1448 + 66) / 1448

async function transfer (net, host, port, bytes) {
  const sender = net.node(net.clients[0], 'bench/support/bulk.js', ['send', host, String(port), String(bytes)])
  const [line] = await watchOutput(sender).printed(/\{.*\}/)
  const { ms } = JSON.parse(line)
  return bytes * 8 / ms // kbit/s of payload
}

runMain(async () => {
  const unavailable = await hostsUnavailableReason()
  if (unavailable) throw new UsageError(`bench:shaping-check cannot run here: ${unavailable}`)
  const results = startResults('shaping-check', 'npm run bench:shaping-check')
  const net = await createTestHosts({ clients: 1 })
  const rows = []
  try {
    const client = net.clients[0]
    for (const kbit of RATES_KBIT) {
      const bytes = Math.round(kbit * 1000 / 8 * SECONDS)
      const sink = net.node(net.server, 'bench/support/bulk.js', ['sink', net.server.address, String(SINK_PORT), String(bytes)])
      await watchOutput(sink).printed(/listening/)
      // Kernel: a token bucket on the client host's interface; its burst is 10 ms at the rate, at least 16 KiB.
      const burst = String(Math.max(16 * 1024, Math.round(kbit * 1000 / 8 / 100)))
      await net.exec(client, 'tc', ['qdisc', 'add', 'dev', client.device, 'root', 'tbf', 'rate', `${kbit}kbit`, 'burst', burst, 'latency', '400ms'])
      const kernel = await transfer(net, net.server.address, SINK_PORT, bytes)
      await net.exec(client, 'tc', ['qdisc', 'del', 'dev', client.device, 'root'])
      sink.kill('SIGTERM')
      await once(sink, 'exit')
      const sink2 = net.node(net.server, 'bench/support/bulk.js', ['sink', net.server.address, String(SINK_PORT), String(bytes)])
      await watchOutput(sink2).printed(/listening/)
      const proxy = net.node(client, 'bin/shaping-proxy.js', ['--listen', `127.0.0.1:${PROXY_PORT}`, '--target', `${net.server.address}:${SINK_PORT}`,
        '--up', String(kbit), '--down', String(kbit), '--rtt', '0'])
      await watchOutput(proxy).printed(/shaping proxy on/)
      const userspace = await transfer(net, '127.0.0.1', PROXY_PORT, bytes)
      proxy.kill('SIGTERM')
      sink2.kill('SIGTERM')
      await Promise.all([once(proxy, 'exit'), once(sink2, 'exit')])
      const row = [kbit, Math.round(kernel), Math.round(kernel * WIRE_PER_PAYLOAD), Math.round(userspace),
        (userspace / (kernel * WIRE_PER_PAYLOAD)).toFixed(3), (userspace / kernel).toFixed(3)]
      rows.push(row)
      printRow(row)
    }
  } finally {
    await net.close()
  }
  results.write({
    columns: ['rate kbit/s', 'kernel (tbf) payload kbit/s', 'kernel on the wire kbit/s', 'proxy payload kbit/s', 'proxy / kernel on the wire', 'proxy / kernel payload'],
    rows,
    notes: [`a ${SECONDS} s bulk TCP transfer (at the rate) from a client host to a server host, each a network namespace on a bridge; ` +
      'kernel: tbf on the client host\'s veth (burst 10 ms at the rate, at least 16 KiB); proxy: bin/shaping-proxy.js in the client host, same rate, no added delay. ' +
      'tbf counts headers against the rate, the proxy payload only: "on the wire" adds 66 header bytes per 1448-byte segment to the kernel\'s payload rate']
  })
})
