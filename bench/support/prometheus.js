// A real Prometheus for the tests and the benches that stream to one (--out): started on a free port
// (or where it is told to listen, e.g. inside a test host's network namespace), its data in a
// temporary directory of its own, with its remote-write receiver on (and its OTLP one where it has
// one), queried through its HTTP API, stopped and its directory removed after (the directory goes
// as soon as the process exits, however it was ended).
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
 * @param {{program?: string, nativeHistograms?: boolean, otlp?: boolean, scrape?: string, cpus?: string,
 *   listen?: string, start?: (program: string, args: string[]) => import('node:child_process').ChildProcess,
 *   request?: (url: string) => Promise<object>}} [options]
 *   program: its binary (Debian's by default); nativeHistograms: take native histograms; otlp: its OTLP receiver
 *   on (Prometheus 3); scrape: a server's host:port whose /metrics it scrapes every 200 ms (job ws-bench);
 *   cpus: the CPUs it runs on (taskset's list), off a measured client's;
 *   listen: its host:port (a free port on 127.0.0.1 by default); start: what starts the program with its
 *   arguments (e.g. in a test host's network namespace: lib/network/hosts.js's start; stdout and stderr piped),
 *   and then ends it on SIGINT and SIGTERM (a test host's teardown does);
 *   request: what GETs a URL of its HTTP API and resolves with the JSON answer (fetch by default; from
 *   inside that namespace where it listens in one)
 * @returns {Promise<{url: string, writeUrl: string, otlpUrl: string, directory: string, query: (promql: string) => Promise<object[]>,
 *   stop: () => Promise<void>}>} directory: its temporary one, removed once it has exited
 */
export async function startPrometheus ({
  program = DEBIAN_PROMETHEUS, nativeHistograms = false, otlp = false, scrape, cpus, listen, start, request = fetchJson
} = {}) {
  if (!fs.existsSync(program)) throw new Error(`no Prometheus at ${program} (apt-get install prometheus)`)
  const address = listen ?? `127.0.0.1:${await freePort('127.0.0.1')}`
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wsbench-prometheus-'))
  const scrapeConfig = scrape
    ? `scrape_configs:\n  - job_name: ws-bench\n    scrape_interval: 200ms\n    static_configs:\n      - targets: ['${scrape}']\n`
    : ''
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), `global: {}\n${scrapeConfig}`)
  const args = [
    `--config.file=${path.join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=${address}`,
    '--web.enable-remote-write-receiver',
    ...(otlp ? ['--web.enable-otlp-receiver'] : []),
    ...(nativeHistograms ? ['--enable-feature=native-histograms'] : [])
  ]
  const launch = start ?? ((command, list) => spawn(command, list, { stdio: ['ignore', 'pipe', 'pipe'] }))
  const child = cpus === undefined ? launch(program, args) : launch('taskset', ['-c', cpus, program, ...args])
  // Its directory goes as soon as it exits, this listener first: also when whoever started it kills it
  // on SIGINT (a test host's teardown, which awaits that exit before it goes on).
  const removeDirectory = () => fs.rmSync(dir, { recursive: true, force: true })
  child.once('exit', removeDirectory)
  // Started by `start`, it is ended by whoever gave it, on SIGINT too: killing it here as well would
  // exit this process (endWithThisProcess does where no other listener is left) before their undoing is done.
  if (!start) endWithThisProcess(child, 'SIGKILL')
  const exited = new Promise((resolve) => {
    child.once('exit', resolve)
    child.once('error', () => resolve(null))
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
    removeDirectory()
  }
  try {
    await ready(child, exited)
  } catch (err) {
    await stop()
    throw err
  }
  const url = `http://${address}`
  if (scrape) await scraped(url, request)
  return { url, writeUrl: `${url}/api/v1/write`, otlpUrl: `${url}/api/v1/otlp/v1/metrics`, directory: dir, query: (promql) => query(url, promql, request), stop }
}

/** GETs a URL and resolves with its JSON answer (whatever its status: Prometheus's errors are JSON too). */
async function fetchJson (url) {
  const response = await fetch(url)
  try {
    return await response.json()
  } catch {
    throw new Error(`${url}: ${response.status}, not JSON`)
  }
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
async function scraped (url, request) {
  const deadline = Date.now() + START_TIMEOUT_MS
  for (;;) {
    const { data } = await request(`${url}/api/v1/targets`)
    if (data.activeTargets.some((target) => target.health === 'up')) return
    if (Date.now() > deadline) throw new Error(`Prometheus did not scrape its target within ${START_TIMEOUT_MS} ms`)
    await delay(100)
  }
}

/**
 * An instant query through the HTTP API.
 * @returns {Promise<Array<{metric: Record<string, string>, value: [number, string]}>>} the vector's elements
 */
async function query (url, promql, request) {
  const body = await request(`${url}/api/v1/query?${new URLSearchParams({ query: promql })}`)
  if (body.status !== 'success') throw new Error(`${promql}: ${body.error ?? JSON.stringify(body)}`)
  return body.data.result
}
