// deploy/: the container build file and the Kubernetes manifests of a multi-host run. Nothing is
// built or applied here (no container runtime, no cluster): the files are read, parsed, checked
// against each other, and every command they run goes through the project's own command-line
// parsers, in-process, with Kubernetes' $(VAR) expansion and the shell's glob done here.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { builtinModules } from 'node:module'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { fileURLToPath } from 'node:url'
import { parseAllDocuments } from 'yaml'
import { parseServerArgs } from '../lib/cli/server-options.js'
import { parseClientArgs } from '../lib/cli/client-options.js'
import { parseMergeArgs } from '../lib/cli/merge-options.js'
import { parseAssertions } from '../lib/report/assertions.js'
import { UsageError } from '../lib/errors.js'
import { throwawayCertificate } from '../lib/server/tls.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const DEPLOY = path.join(ROOT, 'deploy')
const read = (file) => fs.readFileSync(path.join(DEPLOY, file), 'utf8')
const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))

// Sample values for what the cluster provides: the Secret's token, the ConfigMap's start time
// (as `date -u -d '+2 min' +%FT%TZ` prints it: no milliseconds) and the completion index.
const TOKEN = 'sample-token-0123'
// The Secret ws-bench-tls as `kubectl create secret tls` makes it: a certificate for the Service's name and its key.
const CERTIFICATE = await throwawayCertificate(['ws-bench-server'])
const SECRET_FILES = { 'ws-bench-tls': { 'tls.crt': CERTIFICATE.cert, 'tls.key': CERTIFICATE.key } }
const MOUNTS = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-test-'))
test.after(() => fs.rmSync(MOUNTS, { recursive: true, force: true }))
const START_AT = new Date(Date.now() + 120_000).toISOString().replace(/\.\d+Z$/, 'Z')
// The ConfigMap's optional OUT: where the pods stream their metrics (--out, through BENCH_OUT).
const OUT = 'prometheus-rw=http://prometheus.monitoring:9090/api/v1/write'

/** Every YAML document of a manifest, each checked to parse without error or warning, as kubectl reads YAML (1.1: 0440 is octal). */
function manifests (file) {
  const docs = parseAllDocuments(read(file), { version: '1.1' })
  assert.ok(Array.isArray(docs), `${file}: not a YAML stream`)
  return docs.map((doc, i) => {
    assert.deepEqual(doc.errors.map(String), [], `${file}, document ${i + 1}`)
    assert.deepEqual(doc.warnings.map(String), [], `${file}, document ${i + 1}`)
    return doc.toJS()
  }).filter((doc) => doc !== null)
}

const volumeDocs = manifests('kubernetes/volume.yaml')
const serverDocs = manifests('kubernetes/server.yaml')
const clientDocs = manifests('kubernetes/clients.yaml')
const mergeDocs = manifests('kubernetes/merge.yaml')
const only = (docs, kind) => {
  const found = docs.filter((doc) => doc.kind === kind)
  assert.equal(found.length, 1, `expected one ${kind}, found ${found.length}`)
  return found[0]
}
const pvc = only(volumeDocs, 'PersistentVolumeClaim')
const deployment = only(serverDocs, 'Deployment')
const service = only(serverDocs, 'Service')
const clientJob = only(clientDocs, 'Job')
const mergeJob = only(mergeDocs, 'Job')
const containerOf = (workload) => {
  const containers = workload.spec.template.spec.containers
  assert.equal(containers.length, 1, `${workload.metadata.name}: one container`)
  return containers[0]
}
const serverContainer = containerOf(deployment)
const clientContainer = containerOf(clientJob)
const mergeContainer = containerOf(mergeJob)

/**
 * What a container sees of its Secret volumes, as the kubelet would mount them: each under a
 * directory here, with the files its `items` pick (every key without them). Mount path -> directory.
 */
function secretMounts (workload) {
  const container = containerOf(workload)
  const mounts = new Map()
  for (const mount of container.volumeMounts ?? []) {
    const volume = workload.spec.template.spec.volumes.find((v) => v.name === mount.name)
    if (!volume?.secret) continue
    const files = SECRET_FILES[volume.secret.secretName]
    assert.ok(files, `no sample for the Secret ${volume.secret.secretName}`)
    const directory = fs.mkdtempSync(path.join(MOUNTS, `${container.name}-`))
    const items = volume.secret.items ?? Object.keys(files).map((key) => ({ key, path: key }))
    for (const item of items) {
      assert.ok(item.key in files, `${container.name}: the Secret has no key ${item.key}`)
      fs.writeFileSync(path.join(directory, item.path), files[item.key])
    }
    assert.equal(mount.readOnly, true, `${container.name}: the Secret is mounted read-only`)
    mounts.set(mount.mountPath, directory)
  }
  return mounts
}
const MOUNTED = new Map([[serverContainer, secretMounts(deployment)], [clientContainer, secretMounts(clientJob)]])
/** A path inside a mounted Secret, where this test put its files. */
const localPath = (container, arg) => {
  for (const [mountPath, directory] of MOUNTED.get(container) ?? []) {
    if (arg.startsWith(`${mountPath}/`)) return path.join(directory, arg.slice(mountPath.length + 1))
  }
  return arg
}
const K = clientJob.spec.completions

/** Whether every label of `selector` is on `labels`. */
const selects = (selector, labels) => Object.entries(selector).every(([key, value]) => labels?.[key] === value)

/**
 * The value of each env entry, with sample values for Secrets, ConfigMaps and the index.
 * @param {object} container
 * @param {number} [index] the pod's completion index
 * @param {{out?: boolean}} [config] whether the ConfigMap has its optional OUT (otherwise Kubernetes leaves BENCH_OUT unset)
 */
function envOf (container, index, { out = true } = {}) {
  const env = {}
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom
    if (!from) env[entry.name] = String(entry.value)
    else if (from.secretKeyRef) env[entry.name] = TOKEN
    else if (from.configMapKeyRef?.key === 'START_AT') env[entry.name] = START_AT
    else if (from.configMapKeyRef?.key === 'OUT' && from.configMapKeyRef.optional) env[entry.name] = out ? OUT : undefined
    else if (from.fieldRef?.fieldPath === "metadata.annotations['batch.kubernetes.io/job-completion-index']") env[entry.name] = String(index)
    else assert.fail(`${container.name}: no sample value for env ${entry.name} (${JSON.stringify(from)})`)
  }
  // An optional key the ConfigMap lacks leaves its variable unset.
  for (const name of Object.keys(env)) if (env[name] === undefined) delete env[name]
  // Kubernetes sets it in every container of an Indexed Job, declared or not.
  if (index !== undefined) env.JOB_COMPLETION_INDEX ??= String(index)
  return env
}

/** Kubernetes' $(VAR) expansion of command and args; an unknown variable would stay as typed. */
function expand (text, env) {
  assert.ok(!text.includes('$$'), `escaped $$ not expected in '${text}'`)
  return text.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (whole, name) => {
    assert.ok(name in env, `'${text}' uses $(${name}), which the container's env does not define`)
    return env[name]
  })
}

/**
 * The words of a one-command `sh -c` script: quotes removed, unquoted globs expanded against
 * `files` (as sh does: no match leaves the pattern). Anything beyond one simple command fails.
 */
function shellWords (script, files) {
  const words = []
  let word = null
  let glob = false
  const end = () => {
    if (word === null) return
    if (glob) {
      const pattern = new RegExp(`^${word.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`)
      const matches = files.filter((file) => pattern.test(file)).sort()
      words.push(...(matches.length ? matches : [word]))
    } else {
      words.push(word)
    }
    word = null
    glob = false
  }
  for (let i = 0; i < script.length; i++) {
    const char = script[i]
    if (char === ' ' || char === '\t') {
      end()
    } else if (char === '"' || char === "'") {
      const close = script.indexOf(char, i + 1)
      assert.ok(close > i, `unclosed quote in: ${script}`)
      const quoted = script.slice(i + 1, close)
      if (char === '"') assert.ok(!/[$`\\]/.test(quoted), `expansion inside double quotes not handled: ${script}`)
      word = (word ?? '') + quoted
      i = close
    } else {
      assert.ok(!/[;&|<>`$\\\n(){}]/.test(char), `'${char}' in an sh -c script: only one simple command is checked here: ${script}`)
      if (char === '*') glob = true
      word = (word ?? '') + char
    }
  }
  end()
  return words
}

const SCRIPTS = {
  'server.js': (argv, env) => parseServerArgs(argv, env),
  'client_json.js': (argv) => parseClientArgs(argv, 'json'),
  'client_protobuf.js': (argv) => parseClientArgs(argv, 'protobuf'),
  'client.js': (argv) => parseClientArgs(argv, null),
  'bin/merge.js': (argv) => parseMergeArgs(argv)
}

/**
 * Parses one container command (command + args, expanded) with the project's parser for it, in
 * this process, with the container's env in process.env for the call (the clients read
 * BENCH_TOKEN from there). Resolves to {script, options}.
 */
async function parseCommand (argv, env, files = []) {
  if (argv[0] === 'sh' && argv[1] === '-c') {
    assert.equal(argv.length, 3, `sh -c takes one script: ${argv.join(' ')}`)
    return parseCommand(shellWords(argv[2], files), env)
  }
  assert.equal(argv[0], 'node', `not a node command: ${argv.join(' ')}`)
  const script = argv[1]
  assert.ok(script in SCRIPTS, `unknown entry point '${script}'`)
  // --help would make yargs print and exit this process.
  assert.ok(!argv.some((arg) => arg === '--help' || arg === '-h'), '--help in a manifest')
  const saved = { ...process.env }
  Object.assign(process.env, env)
  try {
    return { script, options: await SCRIPTS[script](['node', ...argv.slice(1)], env) }
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
    Object.assign(process.env, saved)
  }
}

const commandLine = (container, env) => [...(container.command ?? []), ...(container.args ?? [])]
  .map((arg) => localPath(container, expand(String(arg), env)))
const clientOut = (index) => expand(String(clientContainer.args[clientContainer.args.indexOf('--out') + 1]), envOf(clientContainer, index))

/** The Containerfile's instructions by stage, continuation lines joined and comments dropped. */
function containerStages () {
  const lines = read('Containerfile').replace(/\\\n/g, ' ').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'))
  const stages = []
  for (const line of lines) {
    const [, instruction, rest] = /^(\S+)\s+(.*)$/.exec(line)
    if (instruction.toUpperCase() === 'FROM') {
      const [, image, name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest)
      stages.push({ image, name, steps: [] })
    } else {
      assert.ok(stages.length, `${instruction} before FROM`)
      stages.at(-1).steps.push({ instruction: instruction.toUpperCase(), rest })
    }
  }
  return stages
}

test('every YAML document parses, with the kinds, names and API versions expected', () => {
  const kinds = (docs) => docs.map((doc) => `${doc.apiVersion} ${doc.kind} ${doc.metadata?.name}`)
  assert.deepEqual(kinds(volumeDocs), ['v1 PersistentVolumeClaim ws-bench-results'])
  assert.deepEqual(kinds(serverDocs), ['apps/v1 Deployment ws-bench-server', 'v1 Service ws-bench-server'])
  assert.deepEqual(kinds(clientDocs), ['batch/v1 Job ws-bench-clients'])
  assert.deepEqual(kinds(mergeDocs), ['batch/v1 Job ws-bench-merge'])
})

test('the Service selects the server pods, and only them, on the port the server listens on', () => {
  assert.equal(deployment.spec.replicas, 1)
  const serverLabels = deployment.spec.template.metadata.labels
  assert.ok(selects(deployment.spec.selector.matchLabels, serverLabels), 'the Deployment selects its own pods')
  assert.ok(Object.keys(service.spec.selector).length > 0)
  assert.ok(selects(service.spec.selector, serverLabels), 'the Service selects the server pods')
  for (const job of [clientJob, mergeJob]) {
    assert.ok(!selects(service.spec.selector, job.spec.template.metadata?.labels), `the Service must not select ${job.metadata.name}'s pods`)
  }
  assert.equal(service.spec.ports.length, 1)
  const [servicePort] = service.spec.ports
  assert.equal(servicePort.port, 7070)
  assert.equal(servicePort.targetPort, 7070)
  assert.deepEqual(serverContainer.ports.map((port) => port.containerPort), [7070])
  // No HTTP probe: GET /metrics needs the token.
  const probe = serverContainer.readinessProbe
  assert.ok(probe.tcpSocket && !probe.httpGet, 'readiness is a TCP probe')
  const probePort = typeof probe.tcpSocket.port === 'number' ? probe.tcpSocket.port : serverContainer.ports.find((port) => port.name === probe.tcpSocket.port)?.containerPort
  assert.equal(probePort, 7070)
})

test('the server runs on 0.0.0.0:7070 over TLS with the certificate of the Secret ws-bench-tls and the token from the Secret (parseServerArgs)', async () => {
  const env = envOf(serverContainer)
  const { script, options } = await parseCommand(commandLine(serverContainer, env), env)
  assert.equal(script, 'server.js')
  assert.equal(options.host, '0.0.0.0')
  assert.equal(options.port, serverContainer.ports[0].containerPort)
  assert.equal(options.token, TOKEN, 'the server requires the Secret\'s token')
  assert.deepEqual(options.tls, { ...CERTIFICATE, throwaway: false }, 'the Secret\'s certificate and key, read and matched')
})

test('TLS between pods: the Secret the README creates, for the Service\'s name; the clients mount only its certificate, as --ca', () => {
  const secretOf = (workload) => workload.spec.template.spec.volumes.find((volume) => volume.secret)?.secret
  const serverSecret = secretOf(deployment)
  assert.equal(serverSecret.secretName, 'ws-bench-tls')
  assert.equal(serverSecret.items, undefined, 'the server has the certificate and its key')
  const clientSecret = secretOf(clientJob)
  assert.equal(clientSecret.secretName, serverSecret.secretName)
  assert.deepEqual(clientSecret.items.map((item) => item.key), ['tls.crt'], 'never the key in a client pod')
  const readme = read('README.md')
  assert.ok(readme.includes(`kubectl create secret tls ${serverSecret.secretName} --cert=tls.crt --key=tls.key`), 'README creates the Secret used')
  assert.ok(readme.includes(`subjectAltName=DNS:${service.metadata.name}`), 'README\'s certificate is valid for the name the clients connect to')
})

test('the client Job is Indexed, completions = parallelism, pods not restarted', () => {
  assert.equal(clientJob.spec.completionMode, 'Indexed')
  assert.ok(Number.isInteger(K) && K >= 2, `completions ${K}`)
  assert.equal(clientJob.spec.parallelism, K, 'every part runs at once')
  assert.equal(clientJob.spec.template.spec.restartPolicy, 'Never')
  assert.equal(mergeJob.spec.template.spec.restartPolicy, 'Never')
  assert.equal(mergeJob.spec.completions ?? 1, 1)
})

test('each client pod runs a valid client command against the Service, starting at START_AT (parseClientArgs)', async () => {
  const outs = []
  for (let index = 0; index < K; index++) {
    const env = envOf(clientContainer, index)
    const { script, options } = await parseCommand(commandLine(clientContainer, env), env)
    assert.match(script, /^client(_json|_protobuf)?\.js$/)
    assert.equal(options.load.url, `wss://${service.metadata.name}:${service.spec.ports[0].port}`)
    assert.equal(options.load.ca, CERTIFICATE.cert, 'the clients verify the server with the Secret\'s certificate')
    assert.equal(options.load.startAt, Date.parse(START_AT), 'every pod starts measuring at START_AT')
    assert.ok(options.load.durationMs > 0 && options.load.messages === undefined, 'a --duration run, so the parts end together')
    assert.equal(options.json, true)
    assert.equal(options.load.headers.Authorization, `Bearer ${TOKEN}`, 'the clients send the Secret\'s token')
    assert.equal(options.test, 'medium')
    assert.equal(options.out, clientOut(index))
    outs.push(options.out)
  }
  assert.equal(new Set(outs).size, K, `one report file per pod: ${outs.join(', ')}`)
})

test('with OUT in the run\'s ConfigMap, every pod and the merge stream there, the pods\' run id START_AT; without, nothing', async () => {
  for (const out of [true, false]) {
    for (const index of [0, K - 1]) {
      const env = envOf(clientContainer, index, { out })
      const { options } = await parseCommand(commandLine(clientContainer, env), env)
      assert.deepEqual(options.outputs.streams.map(({ kind, url }) => `${kind}=${url.href}`), out ? [OUT] : [])
      assert.equal(options.outputs.tags.testid, new Date(START_AT).toISOString(), 'every pod\'s series share the run id')
    }
    const env = envOf(mergeContainer, undefined, { out })
    const { options } = await parseCommand(commandLine(mergeContainer, env), env, [clientOut(0)])
    assert.equal(options.outputs.streams.length, out ? 1 : 0)
  }
})

test('the harness is not vacuous: the parsers reject a bad option and a past --start-at', async () => {
  const env = envOf(clientContainer, 0)
  await assert.rejects(parseCommand([...commandLine(clientContainer, env), '--no-such-option'], env), UsageError)
  const past = { ...env, START_AT: new Date(Date.now() - 60_000).toISOString() }
  await assert.rejects(parseCommand(commandLine(clientContainer, past), past), (err) => err instanceof UsageError && /in the past/.test(err.message))
  await assert.rejects(parseCommand(['node', 'server.js', '--port', '70000'], {}), UsageError)
  await assert.rejects(parseCommand(['sh', '-c', 'node bin/merge.js --json'], {}), UsageError)
})

test('the merge Job merges exactly the clients\' reports and checks errors==0 (parseMergeArgs)', async () => {
  const outs = Array.from({ length: K }, (_, index) => clientOut(index))
  assert.deepEqual(mergeContainer.command.slice(0, 2), ['sh', '-c'])
  // What the volume holds after the clients and one earlier merge.
  const files = [...outs, '/results/merged.json']
  const { script, options } = await parseCommand(commandLine(mergeContainer, envOf(mergeContainer)), envOf(mergeContainer), files)
  assert.equal(script, 'bin/merge.js')
  assert.deepEqual(options.files, [...outs].sort(), 'the glob takes every client report and nothing else')
  assert.equal(options.json, true)
  assert.equal(options.out, '/results/merged.json')
  assert.deepEqual(options.assert, ['errors==0'])
  assert.equal(parseAssertions(options.assert).length, 1)
})

test('clients and merge share one ReadWriteMany volume, mounted where the reports are written', () => {
  assert.ok(pvc.spec.accessModes.includes('ReadWriteMany'), 'pods on several nodes write to it')
  for (const job of [clientJob, mergeJob]) {
    const { volumes } = job.spec.template.spec
    const container = containerOf(job)
    const claims = volumes.filter((volume) => volume.persistentVolumeClaim)
    assert.deepEqual(claims.map((volume) => volume.persistentVolumeClaim.claimName), [pvc.metadata.name], job.metadata.name)
    const mount = container.volumeMounts.find((m) => m.name === claims[0].name)
    assert.equal(mount?.mountPath, '/results', job.metadata.name)
    assert.ok(!mount.readOnly)
  }
  for (let index = 0; index < K; index++) assert.equal(path.posix.dirname(clientOut(index)), '/results')
})

test('server and clients take the token from the same Secret key, as the README creates it', () => {
  const tokenRef = (container) => {
    const entry = container.env.find((e) => e.name === 'BENCH_TOKEN')
    assert.ok(entry?.valueFrom?.secretKeyRef, `${container.name}: BENCH_TOKEN from a Secret`)
    return entry.valueFrom.secretKeyRef
  }
  const { name, key } = tokenRef(serverContainer)
  assert.deepEqual(tokenRef(clientContainer), { name, key })
  // Never on the command line, where `ps` and `kubectl describe` would show it.
  for (const container of [serverContainer, clientContainer]) {
    assert.ok(!commandLine(container, envOf(container, 0)).includes('--token'))
  }
  assert.ok(read('README.md').includes(`kubectl create secret generic ${name} --from-literal=${key}=`), 'README creates the Secret used')
})

test('START_AT comes from the ConfigMap the README creates, in the format the clients accept', () => {
  const entry = clientContainer.env.find((e) => e.name === 'START_AT')
  const { name, key } = entry.valueFrom.configMapKeyRef
  assert.equal(key, 'START_AT')
  const readme = read('README.md')
  assert.ok(readme.includes(`kubectl create configmap ${name} --from-literal=${key}="$(date -u -d '+2 min' +%FT%TZ)"`), 'README sets the ConfigMap used')
  assert.match(START_AT, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'the sample looks like date +%FT%TZ')
})

test('the Containerfile builds the image the manifests run: node:20 slim, non-root, server by default, from the package', async () => {
  const stages = containerStages()
  const final = stages.at(-1)
  assert.match(final.image, /^node:20(\.\d+)*(-[a-z]+)?-slim$/)
  const steps = (instruction) => final.steps.filter((step) => step.instruction === instruction)
  // The installed package's own directory: the manifests' `node server.js` and `node client.js` run there.
  assert.equal(steps('WORKDIR').at(-1).rest, `/opt/ws-bench/lib/node_modules/${PACKAGE.name}`)
  const cmd = steps('CMD')
  assert.equal(cmd.length, 1)
  const argv = JSON.parse(cmd[0].rest)
  assert.deepEqual(argv, ['node', 'server.js', '--host', '0.0.0.0'])
  const { options } = await parseCommand(argv, {})
  assert.equal(options.host, '0.0.0.0')
  assert.equal(options.port, 7070)
  const user = steps('USER').at(-1)?.rest
  assert.ok(user && !/^(root|0)(:|$)/.test(user), `runs as a non-root user, got ${user}`)
  // Numeric, so that runAsNonRoot can verify it; and the pods ask for the same uid.
  assert.match(user, /^[1-9]\d*(:\d+)?$/)
  for (const workload of [deployment, clientJob, mergeJob]) {
    const security = workload.spec.template.spec.securityContext
    assert.equal(security?.runAsNonRoot, true, workload.metadata.name)
    assert.equal(String(security.runAsUser), user.split(':')[0], workload.metadata.name)
  }
  const readme = read('README.md')
  const tag = /build -f deploy\/Containerfile -t (\S+) \./.exec(readme)?.[1]
  assert.ok(tag, 'README builds the image')
  for (const container of [serverContainer, clientContainer, mergeContainer]) assert.equal(container.image, tag, container.name)
})

test('the image is the package as npm installs it: packed in a build stage, installed globally, only that copied', () => {
  const [build, final] = containerStages()
  const runs = build.steps.filter((step) => step.instruction === 'RUN').map((step) => step.rest).join(' && ')
  // npm ci runs prepare (protobuf.js code, help texts); npm pack ships what the package's files say.
  assert.match(runs, /npm ci\b(?![^&;]*--(omit=dev|ignore-scripts))/)
  assert.match(runs, /npm pack\b/)
  assert.match(runs, /npm install -g --prefix \/opt\/ws-bench\b[^&;]*\.tgz/)
  const copies = final.steps.filter((step) => step.instruction === 'COPY').map((step) => step.rest)
  assert.deepEqual(copies, [`--from=${build.name} /opt/ws-bench/ /opt/ws-bench/`])
})

test('the package ships every file the commands load, and only runtime dependencies are imported', () => {
  // package.json's files: folders (ending in /), files, and servers/go/*.go.
  const patterns = PACKAGE.files.map((entry) => new RegExp(`^${entry.replace(/[.]/g, '\\.').replace(/\*/g, '[^/]*')}${entry.endsWith('/') ? '' : '$'}`))
  // A folder named at run time (servers/) is shipped when files ship some of it.
  const shipped = (file) => patterns.some((pattern) => pattern.test(file) || pattern.test(`${file}/`)) ||
    PACKAGE.files.some((entry) => entry.startsWith(`${file}/`))

  // Walk the modules from every entry point the package runs: relative imports, files and
  // directories named with new URL(..., import.meta.url) or PROJECT_ROOT, and packages.
  const entries = ['server.js', 'client.js', 'client_json.js', 'client_protobuf.js', ...Object.values(PACKAGE.bin), 'bin/compare.js', 'bin/shaping-proxy.js']
  const needed = new Set()
  const packages = new Set()
  const queue = [...entries]
  while (queue.length) {
    const file = queue.shift()
    if (needed.has(file)) continue
    needed.add(file)
    if (!file.endsWith('.js') || file === 'proto/generated.js') continue
    const code = fs.readFileSync(path.join(ROOT, file), 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')
    const specifiers = [
      ...code.matchAll(/\bfrom\s+['"]([^'"]+)['"]/g),
      ...code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
      ...code.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
      ...code.matchAll(/\brequire(?:\.resolve)?\(\s*['"]([^'"]+)['"]\s*\)/g)
    ].map((m) => m[1])
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) queue.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)))
      else if (!specifier.startsWith('node:') && !builtinModules.includes(specifier)) packages.add(specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0])
    }
    for (const [, prefix] of code.matchAll(/new URL\(\s*[`'"](\.{1,2}\/[^`'"$]*)/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), prefix)).replace(/\/$/, '')
      needed.add(target)
      // A folder of modules loaded by name (lib/codecs/formats/): each one is walked too.
      if (target.startsWith('lib/') && fs.statSync(path.join(ROOT, target), { throwIfNoEntry: false })?.isDirectory()) {
        queue.push(...fs.readdirSync(path.join(ROOT, target)).filter((name) => name.endsWith('.js')).map((name) => `${target}/${name}`))
      }
    }
    for (const [, rel] of code.matchAll(/PROJECT_ROOT,\s*['"]([^'"]+)['"]/g)) needed.add(rel)
  }
  for (const dir of ['lib', 'proto', 'data', 'web', 'vendor']) assert.ok([...needed].some((file) => file === dir || file.startsWith(`${dir}/`)), `the walk finds ${dir}/`)
  const missing = [...needed].filter((file) => !shipped(file))
  assert.deepEqual(missing, [], 'loaded at run time but not in the package')
  const devOnly = [...packages].filter((name) => !PACKAGE.dependencies[name])
  assert.deepEqual(devOnly, [], 'imported at run time but a devDependency: not installed with the package')
})

test('every workload passes the restricted pod-security level: non-root, RuntimeDefault seccomp, no privilege escalation, every capability dropped', () => {
  for (const workload of [deployment, clientJob, mergeJob]) {
    const { securityContext: pod, containers, initContainers = [] } = workload.spec.template.spec
    const name = workload.metadata.name
    assert.equal(pod.runAsNonRoot, true, name)
    assert.equal(pod.seccompProfile?.type, 'RuntimeDefault', name)
    for (const container of [...containers, ...initContainers]) {
      const context = container.securityContext ?? {}
      assert.equal(context.allowPrivilegeEscalation, false, `${name}/${container.name}`)
      assert.deepEqual(context.capabilities?.drop, ['ALL'], `${name}/${container.name}`)
      assert.equal(context.capabilities?.add, undefined, `${name}/${container.name}`)
      assert.equal(context.privileged ?? false, false, `${name}/${container.name}`)
    }
    assert.ok(!workload.spec.template.spec.hostNetwork && !workload.spec.template.spec.hostPID, name)
  }
})

test('the README names files that exist', () => {
  const readme = read('README.md')
  for (const [, file] of readme.matchAll(/deploy\/(kubernetes[\w-]*\/[\w-]+\.yaml|Containerfile)/g)) {
    assert.ok(fs.existsSync(path.join(DEPLOY, file)), file)
  }
  for (const file of fs.readdirSync(path.join(DEPLOY, 'kubernetes'))) assert.ok(readme.includes(`kubernetes/${file}`), `README mentions ${file}`)
})

// The kustomization of the four manifests and the small-node overlay (deploy/kubernetes-small-node).
const kustomization = (dir) => parseAllDocuments(read(`${dir}/kustomization.yaml`))[0].toJS()
const base = kustomization('kubernetes')
const overlay = kustomization('kubernetes-small-node')
const baseDocs = [...volumeDocs, ...serverDocs, ...clientDocs, ...mergeDocs]
/** A CPU quantity in cores: "2", "500m". */
const cores = (quantity) => String(quantity).endsWith('m') ? Number(String(quantity).slice(0, -1)) / 1000 : Number(quantity)
/** The overlay's JSON patches applied to copies of the base's documents, as kustomize does (replace, and add to a list's end). */
function patchedDocs () {
  const docs = structuredClone(baseDocs)
  for (const { target, patch } of overlay.patches) {
    const matches = docs.filter((doc) => doc.kind === target.kind && doc.metadata.name === target.name)
    assert.equal(matches.length, 1, `the patch's target ${target.kind}/${target.name} is in the base`)
    for (const { op, path: pointer, value } of parseAllDocuments(patch)[0].toJS()) {
      assert.ok(op === 'replace' || (op === 'add' && pointer.endsWith('/-')), `${target.name}: replace, or add at a list's end (${op} ${pointer})`)
      const keys = pointer.split('/').slice(1)
      const parent = keys.slice(0, -1).reduce((node, key) => node?.[key], matches[0])
      if (op === 'add') {
        assert.ok(Array.isArray(parent), `${target.name}: ${pointer} adds to a list of the base`)
        parent.push(value)
        continue
      }
      assert.ok(parent && keys.at(-1) in parent, `${target.name}: ${pointer} is in the base`)
      parent[keys.at(-1)] = value
    }
  }
  return docs
}

test('the kustomization lists the four manifests, and every object is labelled with the component its step applies (-l)', () => {
  const manifestFiles = fs.readdirSync(path.join(DEPLOY, 'kubernetes')).filter((file) => file !== 'kustomization.yaml').sort()
  assert.deepEqual([...base.resources].sort(), manifestFiles)
  assert.deepEqual(overlay.resources, ['../kubernetes'])
  const components = baseDocs.map((doc) => doc.metadata.labels?.['app.kubernetes.io/component'])
  assert.deepEqual(components, ['results', 'server', 'server', 'client', 'merge'])
  for (const doc of [deployment, clientJob, mergeJob]) {
    assert.equal(doc.spec.template.metadata.labels['app.kubernetes.io/component'], doc.metadata.labels['app.kubernetes.io/component'], `${doc.metadata.name}: its pods carry its component`)
  }
})

test('the small-node overlay fits the server and every client pod on 2 cores beside a control plane, changing only their requests and the clients\' pacing', () => {
  for (const { patch } of overlay.patches) {
    for (const { path: pointer } of parseAllDocuments(patch)[0].toJS()) assert.match(pointer, /^\/spec\/template\/spec\/containers\/0\/(resources\/requests|args\/-)$/)
  }
  const docs = patchedDocs()
  const requests = (name) => docs.find((doc) => doc.metadata.name === name && doc.kind !== 'Service').spec.template.spec.containers[0].resources.requests
  const cpu = cores(requests('ws-bench-server').cpu) + K * cores(requests('ws-bench-clients').cpu)
  // A kubeadm control plane on the same node asks ~0.85 CPU (API server 250m, controller-manager 200m, scheduler, etcd, 2 CoreDNS 100m each).
  assert.ok(cpu <= 2 - 0.85, `server and ${K} clients request ${cpu} CPU`)
  assert.ok(cores(serverContainer.resources.requests.cpu) + K * cores(clientContainer.resources.requests.cpu) > 2, 'the base itself does not fit a 2-core node (what the overlay is for)')
  for (const name of ['ws-bench-server', 'ws-bench-clients']) {
    const patched = docs.find((doc) => doc.metadata.name === name && doc.kind !== 'Service')
    const original = baseDocs.find((doc) => doc.metadata.name === name && doc.kind !== 'Service')
    assert.ok(!('cpu' in (patched.spec.template.spec.containers[0].resources.limits ?? {})), `${name}: no CPU limit (it would throttle)`)
    const { resources: _a, args: patchedArgs, ...patchedRest } = patched.spec.template.spec.containers[0]
    const { resources: _b, args: originalArgs, ...originalRest } = original.spec.template.spec.containers[0]
    assert.deepEqual(patchedRest, originalRest, `${name}: only resources and arguments differ`)
    // Timer pacing: a 200m request does not pay for precise pacing's thread and waiting (docs/method.md).
    assert.deepEqual(patchedArgs, name === 'ws-bench-clients' ? [...originalArgs, '--pacing', 'timer'] : originalArgs, `${name}: its arguments`)
  }
})

// KUSTOMIZE: the kustomize kubectl v1.34 has built in, built by .ci/kustomize.sh (.ci/run sets it); in CI its absence fails the test.
const kustomizeUnavailable = !process.env.KUSTOMIZE && !process.env.CI && 'KUSTOMIZE is not set: KUSTOMIZE="$(bash .ci/kustomize.sh)" builds it'

test('kustomize renders the overlay as the test patches it (kubectl\'s own kustomize, KUSTOMIZE)', { skip: kustomizeUnavailable }, async () => {
  assert.ok(process.env.KUSTOMIZE, 'KUSTOMIZE is set (.ci/run sets it: bash .ci/kustomize.sh)')
  const { stdout } = await promisify(execFile)(process.env.KUSTOMIZE, ['build', path.join(DEPLOY, 'kubernetes-small-node')])
  const rendered = parseAllDocuments(stdout).map((doc) => doc.toJS())
  const key = (doc) => `${doc.kind}/${doc.metadata.name}`
  const expected = patchedDocs()
  assert.deepEqual(rendered.map(key).sort(), expected.map(key).sort())
  for (const doc of rendered) assert.deepEqual(doc, expected.find((other) => key(other) === key(doc)), key(doc))
})

test('every non-root pod can read the Secret files it mounts: the kubelet writes them as root, so fsGroup and group-readable modes', () => {
  for (const workload of [deployment, clientJob]) {
    const { securityContext: pod, volumes } = workload.spec.template.spec
    for (const volume of volumes.filter((v) => v.secret)) {
      const mode = volume.secret.defaultMode ?? 0o644
      const readable = (mode & 0o004) !== 0 || ((mode & 0o040) !== 0 && pod.fsGroup === pod.runAsGroup)
      assert.ok(readable, `${workload.metadata.name}: Secret ${volume.secret.secretName} (mode ${mode.toString(8)}, fsGroup ${pod.fsGroup}) is not readable by ${pod.runAsUser}:${pod.runAsGroup}`)
    }
  }
})
