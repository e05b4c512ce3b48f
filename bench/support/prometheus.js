// A real Prometheus for the tests and bench:out that stream to one (--out): started on a free port,
// its data in a temporary directory of its own, with its remote-write receiver on (and its OTLP one
// where it has one), queried through its HTTP API, stopped and its directory removed after.
import { spawn } from 'node:child_process'
import { setTimeout as delay } from 'node:timers/promises'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { endWithThisProcess } from '../../lib/processes.js'
import { freePort } from '../../lib/server/broker-process.js'

/** Debian's prometheus package (2.42): remote write in, native histograms behind a feature flag, no OTLP. */
export const DEBIAN_PROMETHEUS = '/usr/bin/prometheus'

/** Longest wait for Prometheus to say it is ready. */
const START_TIMEOUT_MS = 30_000

/**
 * Starts a Prometheus and resolves once it takes requests.
 * @param {{program?: string, nativeHistograms?: boolean, otlp?: boolean, scrape?: string, cpus?: string}} [options]
 *   program: its binary (Debian's by default); nativeHistograms: take native histograms; otlp: its OTLP receiver
 *   on (Prometheus 3); scrape: a server's host:port whose /metrics it scrapes every 200 ms (job ws-bench);
 *   cpus: the CPUs it runs on (taskset's list), off a measured client's
 * @returns {Promise<{url: string, writeUrl: string, otlpUrl: string, query: (promql: string) => Promise<object[]>, stop: () => Promise<void>}>}
 */
export async function startPrometheus ({ program = DEBIAN_PROMETHEUS, nativeHistograms = false, otlp = false, scrape, cpus } = {}) {
  if (!fs.existsSync(program)) throw new Error(`no Prometheus at ${program} (apt-get install prometheus)`)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsbench-prometheus-'))
  const scrapeConfig = scrape
    ? `scrape_configs:\n  - job_name: ws-bench\n    scrape_interval: 200ms\n    static_configs:\n      - targets: ['${scrape}']\n`
    : ''
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), `global: {}\n${scrapeConfig}`)
  const port = await freePort('127.0.0.1')
  const args = [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--web.enable-remote-write-receiver',
    ...(otlp ? ['--web.enable-otlp-receiver'] : []),
    ...(nativeHistograms ? ['--enable-feature=native-histograms'] : [])
  ]
  const child = cpus === undefined
    ? spawn(program, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('taskset', ['-c', cpus, program, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
  endWithThisProcess(child, 'SIGKILL')
  const exited = new Promise((resolve) => {
    child.once('exit', resolve)
    child.once('error', () => resolve(null))
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    await ready(child, exited)
  } catch (err) {
    await stop()
    throw err
  }
  const url = `http://127.0.0.1:${port}`
  if (scrape) await scraped(url)
  return { url, writeUrl: `${url}/api/v1/write`, otlpUrl: `${url}/api/v1/otlp/v1/metrics`, query: (promql) => query(url, promql), stop }
}

/** Resolves once Prometheus logs that it takes web requests; rejects with one line if it exits or stays silent. */
function ready (child, exited) {
  let output = ''
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prometheus not ready within ${START_TIMEOUT_MS} ms: ${lastLine(output)}`)), START_TIMEOUT_MS)
    const listen = (chunk) => {
      output += chunk
      if (!/Server is ready to receive web requests/.test(output)) return
      clearTimeout(timer)
      resolve()
    }
    // Prometheus logs on stderr; both are read, so that neither pipe fills.
    child.stdout.on('data', listen)
    child.stderr.on('data', listen)
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`Prometheus exited (${code}) before it was ready: ${lastLine(output)}`))
    })
  })
}

const lastLine = (text) => text.trim().split('\n').at(-1) ?? ''

/** Resolves once Prometheus has scraped its target (its discovery takes a few seconds to hand it over). */
async function scraped (url) {
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    const { data } = await (await fetch(`${url}/api/v1/targets`)).json()
    if (data.activeTargets.some((target) => target.health === 'up')) return
    if (Date.now() > deadline) throw new Error(`Prometheus did not scrape its target within ${START_TIMEOUT_MS} ms`)
    await delay(100)
  }
}

/**
 * An instant query through the HTTP API.
 * @returns {Promise<Array<{metric: Record<string, string>, value: [number, string]}>>} the vector's elements
 */
async function query (url, promql) {
  const response = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: promql })}`)
  const body = await response.json()
  if (body.status !== 'success') throw new Error(`${promql}: ${body.error ?? response.status}`)
  return body.data.result
}
