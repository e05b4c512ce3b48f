// npm run bench:kubernetes: deploy/kubernetes for real, on a one-node Kubernetes cluster brought up
// on this machine (bench/support/one-node-cluster.js; its binaries are built once and cached): the image
// built with podman (deploy/podman-image.js) and imported into containerd, a namespace that
// enforces the restricted pod-security level, the manifests applied with the small-node overlay
// (deploy/kubernetes-small-node) a step at a time as deploy/README.md does, the Indexed Job of
// clients run against the server, their reports merged by the merge Job; before them, one client
// process on this host with the pods' own arguments against the same server pod: the figure their
// latency is held against. Then everything is torn
// down and the machine checked: anything left (a process, a network namespace, a bridge, an
// iptables chain, a mount) fails the run. Ctrl-C tears down what was made. Writes
// docs/results/kubernetes.json.
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { parseAllDocuments } from 'yaml'
import { commandLine } from '../lib/cli/parser.js'
import { UsageError, runMain } from '../lib/errors.js'
import { PROJECT_ROOT, runNodeScript } from '../lib/processes.js'
import { throwawayCertificate } from '../lib/server/tls.js'
import { buildImage, command, podmanEnvironment, step, stopCommands } from '../deploy/podman-image.js'
import { KUBECTL, OneNodeCluster, buildBinaries, buildPauseImage, clusterUnavailableReason } from './support/one-node-cluster.js'
import { npmCommand, printTable, startResults } from './support/results.js'

const NAMESPACE = 'ws-bench'
const OVERLAY = path.join(PROJECT_ROOT, 'deploy/kubernetes-small-node')
/** Time from setting START_AT to it: every client pod starts, connects and warms up (10 s) before it. */
const START_LEAD_MS = 30_000

runMain(async () => {
  await commandLine(process.argv, 'Usage: npm run bench:kubernetes\n\nBrings up a one-node Kubernetes cluster here (root; Debian\'s etcd-server, containerd, runc, containernetworking-plugins, podman), ' +
    'runs deploy/kubernetes with the small-node overlay, writes docs/results/kubernetes.json and tears everything down.').parseAsync()
  const unavailable = clusterUnavailableReason()
  if (unavailable) throw new UsageError(`bench:kubernetes cannot run here: ${unavailable}`)
  const results = startResults('kubernetes', npmCommand('bench:kubernetes'))
  const timings = {}
  const timed = async (name, work) => {
    const started = Date.now()
    const value = await work()
    timings[name] = Math.round((Date.now() - started) / 100) / 10
    return value
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-kubernetes-image-'))
  let cluster = null
  let interrupted = false
  let finished = null
  // Once, from whichever comes first: the end of the run or a signal.
  const finish = () => {
    finished ??= (async () => {
      const left = cluster ? await timed('teardown', () => cluster.close([NAMESPACE]).then(() => cluster.leftovers())) : []
      fs.rmSync(work, { recursive: true, force: true })
      for (const line of left) process.stderr.write(`left behind: ${line}\n`)
      return left
    })()
    return finished
  }
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, async () => {
      // A second Ctrl-C would otherwise end this process halfway through the teardown.
      if (interrupted) return step(`${signal}: still tearing down`)
      interrupted = true
      step(`${signal}: tearing down what was made`)
      await stopCommands()
      const left = await finish()
      process.stderr.write(left.length ? `interrupted; ${left.length} things left behind\n` : 'interrupted; nothing left behind\n')
      process.exit(130)
    })
  }

  let outcome = null
  let failure = null
  // After a signal nothing new starts: the handler tears down what is there.
  const unlessInterrupted = () => { if (interrupted) throw new Error('interrupted') }
  try {
    const built = await timed('binaries', buildBinaries)
    if (built === null) timings.binaries = 'cached'
    const podmanEnv = podmanEnvironment(work)
    const image = fullImageName((await renderedOverlay()).find((doc) => doc.kind === 'Deployment').spec.template.spec.containers[0].image)
    unlessInterrupted()
    await timed('image', () => buildImage(image, { env: podmanEnv, work }))
    unlessInterrupted()
    const pause = await buildPauseImage(podmanEnv, work)
    unlessInterrupted()
    cluster = new OneNodeCluster()
    await timed('cluster', () => cluster.start({ images: [pause, image], podmanEnv }))
    outcome = await runJobs(cluster, timed)
    outcome.versions = cluster.versions()
  } catch (err) {
    failure = err
  }
  if (interrupted) return new Promise(() => {}) // the signal's handler exits
  const left = await finish()
  if (failure) throw failure
  if (left.length) throw new Error(`the teardown left ${left.length} things behind (listed above)`)
  return record(results, outcome, timings)
})

/**
 * The overlay as kubectl renders it (kustomize), parsed.
 * @returns {Promise<object[]>}
 */
async function renderedOverlay () {
  return parseAllDocuments(await command(KUBECTL, ['kustomize', OVERLAY])).map((doc) => doc.toJS()).filter(Boolean)
}

/** A name without a registry is Docker Hub's, as containerd names images: ws-bench:0.1.0 is docker.io/library/ws-bench:0.1.0. */
function fullImageName (image) {
  const [first, ...rest] = image.split('/')
  if (rest.length && (/[.:]/.test(first) || first === 'localhost')) return image
  return `docker.io/${rest.length ? '' : 'library/'}${image}`
}

/** The namespace's latest warning event, to say why a step did not finish (a pod that cannot start). */
async function lastWarning (cluster) {
  const events = await cluster.kubectl(['get', 'events', '-n', NAMESPACE, '--field-selector', 'type=Warning', '--sort-by', '.lastTimestamp', '-o', 'json'])
    .then((text) => JSON.parse(text).items, () => [])
  const last = events.at(-1)
  return last ? ` (last warning: ${last.involvedObject.kind} ${last.involvedObject.name}: ${last.reason}: ${last.message.replace(/\s+/g, ' ')})` : ''
}

/** A step that fails with the namespace's latest warning added to its error. */
function explained (cluster, promise) {
  return promise.catch(async (err) => { throw new Error(`${err.message}${await lastWarning(cluster)}`) })
}

/**
 * The run itself, on a cluster that is up: the namespace (restricted enforced, and shown to refuse
 * a pod without those settings), the Secrets, the results volume, then the overlay by component:
 * the server, the clients once START_AT is set, the merge once they have finished.
 * @returns {Promise<{reports: object[], merged: object, startAt: string, refusal: string, requests: object}>}
 */
async function runJobs (cluster, timed) {
  const kubectl = (args) => cluster.kubectl([...args, '-n', NAMESPACE])
  const applyOverlay = (components) => kubectl(['apply', '-k', OVERLAY, '-l', `app.kubernetes.io/component in (${components})`])
  await cluster.apply('namespace', `apiVersion: v1
kind: Namespace
metadata:
  name: ${NAMESPACE}
  labels:
    pod-security.kubernetes.io/enforce: restricted
    pod-security.kubernetes.io/enforce-version: latest
`)
  // Proof that the level is enforced, not merely labelled: the API refuses a pod without its settings.
  const refusal = await kubectl(['run', 'pod-security-probe', '--image', 'ws-bench-probe', '--restart=Never', '--dry-run=server', '-o', 'name']).then(() => null, (err) => err.message)
  if (!/violates PodSecurity "restricted/.test(refusal ?? '')) throw new Error(`namespace ${NAMESPACE} accepted a pod that the restricted pod-security level refuses (${refusal ?? 'no refusal'})`)

  const { cert, key } = await throwawayCertificate(['ws-bench-server'])
  const tls = path.join(cluster.runDir, 'tls')
  fs.mkdirSync(tls)
  fs.writeFileSync(path.join(tls, 'tls.crt'), cert)
  fs.writeFileSync(path.join(tls, 'tls.key'), key, { mode: 0o600 })
  const token = crypto.randomUUID()
  await kubectl(['create', 'secret', 'generic', 'ws-bench-token', `--from-literal=token=${token}`])
  await kubectl(['create', 'secret', 'tls', 'ws-bench-tls', `--cert=${path.join(tls, 'tls.crt')}`, `--key=${path.join(tls, 'tls.key')}`])
  // The claim's volume: a directory of this host (no storage class offers ReadWriteMany here), bound to that claim only.
  const resultsDir = path.join(cluster.runDir, 'results')
  fs.mkdirSync(resultsDir)
  fs.chownSync(resultsDir, 1000, 1000)
  await cluster.apply('results-volume', `apiVersion: v1
kind: PersistentVolume
metadata:
  name: ws-bench-results-${process.pid}
spec:
  capacity: { storage: 1Gi }
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: { namespace: ${NAMESPACE}, name: ws-bench-results }
  hostPath: { path: ${resultsDir}, type: Directory }
`)

  await timed('server', async () => {
    step('the results volume and the server')
    await applyOverlay('results,server')
    await explained(cluster, kubectl(['rollout', 'status', 'deployment/ws-bench-server', '--timeout=120s']))
  })
  const rendered = await renderedOverlay()
  const job = rendered.find((doc) => doc.metadata.name === 'ws-bench-clients')
  // One pod's load, then all the pods' load, each from one process: what the pods are held against.
  const reference = await timed('reference', async () => ({
    pod: await hostReference(kubectl, job, token, 1),
    all: await hostReference(kubectl, job, token, job.spec.completions)
  }))
  // Whole seconds, as `date -u +%FT%TZ` prints it in deploy/README.md.
  const startAt = new Date(Math.ceil((Date.now() + START_LEAD_MS) / 1000) * 1000).toISOString().replace('.000Z', 'Z')
  await timed('clients', async () => {
    step(`the clients, measuring from ${startAt}`)
    await kubectl(['create', 'configmap', 'ws-bench-run', `--from-literal=START_AT=${startAt}`])
    await applyOverlay('client')
    await explained(cluster, jobFinished(cluster, 'ws-bench-clients'))
  })
  await timed('merge', async () => {
    step('the merge')
    await applyOverlay('merge')
    await explained(cluster, jobFinished(cluster, 'ws-bench-merge'))
  })
  const files = fs.readdirSync(resultsDir).filter((name) => /^host-\d+\.json$/.test(name)).sort((a, b) => parseInt(a.slice(5)) - parseInt(b.slice(5)))
  const reports = files.map((name) => ({ part: name, ...JSON.parse(fs.readFileSync(path.join(resultsDir, name), 'utf8')) }))
  const merged = JSON.parse(fs.readFileSync(path.join(resultsDir, 'merged.json'), 'utf8'))
  const requests = Object.fromEntries(rendered.filter((doc) => ['Deployment', 'Job'].includes(doc.kind)).map((doc) =>
    [doc.metadata.name, doc.spec.template.spec.containers[0].resources?.requests ?? null]))
  // The rules the probe broke, without the advice that follows each: "allowPrivilegeEscalation != false (container ... must set ...)".
  const brokenRules = /violates PodSecurity "[^"]+": (.*)$/.exec(refusal)[1].split(/\), (?=[a-z])/i).map((rule) => rule.replace(/ \(.*$/, ''))
  return { reports, merged, startAt, refusal: brokenRules.join('; '), requests, reference }
}

/**
 * One client process on this host with the client pods' own arguments (rate, connections, test,
 * format, pacing), their rate and connections times `scale`, against the server pod over the pod
 * network before the Job runs: a pod's load (1), or all of theirs (the Job's completions), from
 * one process without pods. Its TLS certificate names the Service, so the host, which dials the
 * pod's address, skips the name check (--insecure).
 * @returns {Promise<{report: object, args: string[]}>}
 */
async function hostReference (kubectl, job, token, scale) {
  const podIp = (await kubectl(['get', 'pods', '-l', 'app.kubernetes.io/component=server', '-o', 'jsonpath={.items[0].status.podIP}'])).trim()
  const container = job.spec.template.spec.containers[0]
  const format = container.env.find((entry) => entry.name === 'FORMAT').value
  const scaled = (option) => String(Number(container.args[container.args.indexOf(option) + 1]) * scale)
  // As long as the pods measure (--duration kept): a p99 over a shorter run sees fewer rare stalls.
  const replaced = { '--url': `wss://${podIp}:7070`, '--rate': scaled('--rate'), '--connections': scaled('--connections') }
  const dropped = new Set(['--ca', '--start-at', '--out'])
  const args = ['--insecure']
  for (let i = 0; i < container.args.length; i++) {
    const arg = container.args[i].replace('$(FORMAT)', format)
    // An option to drop or replace takes its value with it.
    if (dropped.has(arg) || arg in replaced) i++
    if (arg in replaced) args.push(arg, replaced[arg])
    else if (!dropped.has(arg)) args.push(arg)
  }
  step(`the host's reference client: node client.js ${args.join(' ')}`)
  const { code, stdout, stderr } = await runNodeScript('client.js', args, { env: { BENCH_TOKEN: token } })
  if (code !== 0) throw new Error(`the host's reference client failed: ${stderr.trim().split('\n').at(-1)}`)
  return { report: JSON.parse(stdout), args }
}

/** Waits until a Job is Complete; a Failed one fails the run with its pods' last log lines. */
async function jobFinished (cluster, name) {
  let condition = null
  await cluster.until(`job ${name} has finished`, async () => {
    const job = JSON.parse(await cluster.kubectl(['get', 'job', name, '-o', 'json', '-n', NAMESPACE]))
    condition = job.status.conditions?.find((c) => ['Complete', 'Failed'].includes(c.type) && c.status === 'True')?.type
    return Boolean(condition)
  }, 5 * 60_000)
  if (condition === 'Failed') {
    const logs = await cluster.kubectl(['logs', '-l', `job-name=${name}`, '--tail=1', '--prefix', '-n', NAMESPACE]).catch((err) => err.message)
    throw new Error(`job ${name} failed: ${logs.trim().replace(/\s*\n\s*/g, ' | ')}`)
  }
}

/** The results table: each client pod, the merge, and the host's reference client. */
function record (results, { reports, merged, startAt, refusal, requests, versions, reference }, timings) {
  const columns = ['part', 'sent', 'acked', 'errors', 'lost', 'msgs/s', 'p50 ms', 'p99 ms', 'start vs START_AT ms']
  const startAtMs = Date.parse(startAt)
  const row = (part, r, start) => [part, r.messages.sent, r.messages.acked, r.messages.errors, r.messages.lost,
    Math.round(r.rate), r.latencyMs.p50.toFixed(3), r.latencyMs.p99.toFixed(3), start]
  const rows = [
    ...reports.map((r) => row(`client pod ${r.part.replace(/\D/g, '')}`, r, r.startedAt - startAtMs)),
    row(`merged (${merged.mergedFrom})`, merged, `spread ${merged.windows.startSpreadMs}`),
    row('host process, one pod\'s load', reference.pod.report, ''),
    row(`host process, all ${reports.length} pods' load`, reference.all.report, '')
  ]
  const worstPod = Math.max(...reports.map((r) => r.latencyMs.p99))
  const ratio = (p99, { report }) => `${(p99 / report.latencyMs.p99).toFixed(2)}x`
  printTable(columns, rows)
  const ok = merged.messages.errors === 0 && merged.messages.lost === 0 && merged.messages.acked === merged.messages.sent
  const seconds = (key) => typeof timings[key] === 'number' ? `${timings[key]} s` : timings[key]
  results.write({
    columns,
    rows,
    notes: [
      `A one-node Kubernetes ${versions.kubernetes} cluster on this machine, built from Go modules (CoreDNS ${versions.coredns}), with Debian's etcd ${versions.etcd}, ` +
        `containerd ${versions.containerd}, runc ${versions.runc} and CNI plugins ${versions.cni}; deploy/kubernetes applied with the small-node overlay ` +
        `(CPU requests: ${Object.entries(requests).filter(([, r]) => r?.cpu).map(([name, r]) => `${name} ${r.cpu}`).join(', ')}) in namespace ${NAMESPACE}, which enforces the restricted pod-security level ` +
        `(a pod without its settings was refused for ${refusal}).`,
      `${reports.length} client pods of the Indexed Job against one server pod through its Service and CoreDNS, over wss://; each measured from START_AT (${startAt}); ` +
        `the merge Job added their reports; every message acknowledged: ${ok ? 'yes' : 'NO'}; the measured phases started within ${merged.windows.startSpreadMs} ms of each other ` +
        `and overlapped for ${merged.windows.overlapMs} ms. Client pods, server and cluster share the machine's ${os.cpus().length} cores.`,
      'References: one client process on the host with the pods\' arguments against the same server pod over the pod network, before the Job ran: ' +
        `one pod's load (node client.js ${reference.pod.args.join(' ')}), p99 ${reference.pod.report.latencyMs.p99.toFixed(3)} ms, ` +
        `and all ${reports.length} pods' load (${reference.all.args.slice(reference.all.args.indexOf('--rate'), reference.all.args.indexOf('--rate') + 4).join(' ')}), ` +
        `p99 ${reference.all.report.latencyMs.p99.toFixed(3)} ms, with ${reference.pod.report.target?.pacing ?? 'no'} pacing as the pods had. ` +
        `The worst pod's p99 is ${ratio(worstPod, reference.pod)} the first; the merged p99 is ${ratio(merged.latencyMs.p99, reference.all)} the second.`,
      `Timings: binaries ${timings.binaries === 'cached' ? 'cached' : `built in ${seconds('binaries')}`}, image ${seconds('image')}, cluster up ${seconds('cluster')}, ` +
        `server ready ${seconds('server')}, reference ${seconds('reference')}, clients ${seconds('clients')} (START_AT ${START_LEAD_MS / 1000} s ahead, then the manifest's measured minute), ` +
        `merge ${seconds('merge')}, teardown ${seconds('teardown')} (nothing left behind); load average ${os.loadavg()[0].toFixed(2)} at the end.`
    ],
    figures: {
      clients: String(reports.length),
      acked: merged.messages.acked.toLocaleString('en-US'),
      'start-skew': `${merged.windows.startSpreadMs} ms`,
      'pod-p99': `${worstPod.toFixed(1)} ms`,
      'host-p99': `${reference.pod.report.latencyMs.p99.toFixed(1)} ms`,
      'against-host': ratio(worstPod, reference.pod),
      'merged-p99': `${merged.latencyMs.p99.toFixed(1)} ms`,
      'host-all-p99': `${reference.all.report.latencyMs.p99.toFixed(1)} ms`,
      'against-host-all': ratio(merged.latencyMs.p99, reference.all)
    }
  })
  return ok ? 0 : 1
}
