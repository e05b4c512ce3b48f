// A real one-node Kubernetes cluster on this machine, for npm run bench:kubernetes: kube-apiserver,
// kube-controller-manager, kube-scheduler, kubelet, kube-proxy and kubectl built from the
// k8s.io/kubernetes Go module (its k8s.io/* staging modules replaced by their published versions),
// CoreDNS from its Go module (only the plugins a cluster's DNS needs), a pause image built from the
// module's pause.c, and etcd, containerd, runc and the CNI plugins from Debian's packages. No image
// registry is needed: images are imported into containerd.
//
// The binaries are built once and kept in ~/.cache/ws-json-vs-protobuf/kubernetes/<versions>/.
// Everything else lives in one run directory and goes with close(): the processes (each in its own
// process group, so a Ctrl-C reaches this process only and the teardown runs in order), the pods'
// network namespaces, mounts and cgroups, the CNI bridge, kube-proxy's and the kubelet's iptables
// chains, the sysctls the kubelet and kube-proxy set. leftovers() then says what, if anything, is
// still there, against a snapshot taken before the cluster started.
import { spawn, spawnSync } from 'node:child_process'
import crypto from 'node:crypto'
import fs from 'node:fs'
import https from 'node:https'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { UsageError } from '../../lib/errors.js'
import { command, step } from '../../deploy/podman-image.js'

const KUBERNETES_VERSION = 'v1.34.2'
/** The staging modules (k8s.io/api, ...) are published as v0.<minor>.<patch> of the same release. */
const STAGING_VERSION = KUBERNETES_VERSION.replace(/^v1\./, 'v0.')
const COREDNS_VERSION = 'v1.13.1'
const KUBERNETES_COMMANDS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'kubelet', 'kube-proxy', 'kubectl']
/** What a build puts in the cache: Kubernetes' commands, CoreDNS and the pause program. */
const BINARIES = [...KUBERNETES_COMMANDS, 'coredns', 'pause']
const CACHE_ROOT = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'ws-json-vs-protobuf', 'kubernetes')
/** Keyed by every version in it, so that a change of any of them builds afresh beside the old. */
const CACHE_DIR = path.join(CACHE_ROOT, `${KUBERNETES_VERSION}-coredns-${COREDNS_VERSION}`)
const BIN_DIR = path.join(CACHE_DIR, 'bin')
/** kubectl as built here: the version of the cluster, kustomize built in. */
export const KUBECTL = path.join(BIN_DIR, 'kubectl')

const NODE_NAME = 'ws-bench-node'
const PAUSE_IMAGE = 'localhost/ws-bench-pause:3.10'
const BRIDGE = 'wsbk8s0'
const POD_CIDR = '10.244.0.0/24'
const SERVICE_CIDR = '10.96.0.0/24'
/** The Service kubernetes.default: the first address of SERVICE_CIDR. */
const API_SERVICE_IP = '10.96.0.1'
const API_PORT = 6443
/** etcd on loopback, on ports of its own, away from any etcd already on the default ones. */
const ETCD_CLIENT_PORT = 23790
const ETCD_PEER_PORT = 23800
const KUBELET_PORT = 10250
const DNS_PORT = 53
/** Programs from Debian's packages, each with the package that has it. */
const DEBIAN_TOOLS = { etcd: 'etcd-server', containerd: 'containerd', ctr: 'containerd', runc: 'runc', '/usr/lib/cni/bridge': 'containernetworking-plugins', iptables: 'iptables', ip: 'iproute2', openssl: 'openssl', podman: 'podman' }
/** What the kubelet (its kernel defaults) and kube-proxy may change: put back as they were. */
const SYSCTLS = ['vm/overcommit_memory', 'vm/panic_on_oom', 'kernel/panic', 'kernel/panic_on_oops', 'kernel/keys/root_maxkeys', 'kernel/keys/root_maxbytes',
  'net/ipv4/conf/all/route_localnet', 'net/bridge/bridge-nf-call-iptables', 'net/ipv4/ip_forward']
/** Host directories the cluster's parts create wherever they are told to work (containerd's shim sockets, CNI's cache, pod logs). */
const HOST_DIRECTORIES = ['/run/containerd', '/var/lib/cni', '/var/log/pods', '/var/log/containers']
/** iptables chains the cluster's parts create: kube-proxy's and the kubelet's KUBE-*, CNI's CNI-*. */
const OUR_CHAINS = /^(KUBE|CNI)-/

/**
 * Why this machine cannot run the cluster, or null when it can: it needs Linux, root, Debian's
 * packages and, for a first build, Go and a C compiler.
 * @returns {string|null} one line, naming what to install
 */
export function clusterUnavailableReason () {
  if (process.platform !== 'linux') return `a one-node cluster needs Linux, not ${process.platform}`
  if (process.getuid?.() !== 0) return 'a one-node cluster needs root (containerd, the kubelet, network namespaces, iptables)'
  const missing = Object.entries(DEBIAN_TOOLS).filter(([tool]) => !found(tool))
  if (missing.length) return `missing ${missing.map(([tool]) => path.basename(tool)).join(', ')}: apt-get install ${[...new Set(missing.map(([, pkg]) => pkg))].join(' ')}`
  if (!binariesBuilt()) {
    if (!found('go')) return `the cluster's binaries are not built yet (${BIN_DIR}) and Go is not here to build them: install Go 1.24 or later`
    if (!found('gcc')) return 'the pause program is not built yet and gcc is not here to build it: apt-get install gcc libc6-dev'
  }
  return null
}

/** Whether a program is on PATH (or, given as a path, is there). */
function found (tool) {
  return tool.startsWith('/') ? fs.existsSync(tool) : spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status === 0
}

function binariesBuilt () {
  return BINARIES.every((name) => fs.existsSync(path.join(BIN_DIR, name)))
}

/**
 * Builds what the cache lacks: Kubernetes' commands from the k8s.io/kubernetes module, CoreDNS from
 * its module, the pause program from the kubernetes module's pause.c. Compiles at the lowest priority.
 * @returns {Promise<number|null>} how long it took in ms, or null when everything was there
 */
export async function buildBinaries () {
  if (binariesBuilt()) return null
  const started = Date.now()
  fs.mkdirSync(BIN_DIR, { recursive: true })
  const kubernetesMissing = KUBERNETES_COMMANDS.filter((name) => !fs.existsSync(path.join(BIN_DIR, name)))
  if (kubernetesMissing.length) await buildKubernetes(kubernetesMissing)
  if (!fs.existsSync(path.join(BIN_DIR, 'coredns'))) await buildCoreDns()
  if (!fs.existsSync(path.join(BIN_DIR, 'pause'))) await buildPause()
  return Date.now() - started
}

/** `go build` at the lowest priority, into a temporary directory first: the cache never holds half a binary. */
async function goBuild (directory, packages, ldflags) {
  const out = path.join(directory, 'out')
  fs.rmSync(out, { recursive: true, force: true })
  await command('nice', ['-n', '19', 'go', 'build', '-trimpath', '-ldflags', ldflags, '-o', `${out}/`, ...packages], { cwd: directory, show: true, env: { ...process.env, GOFLAGS: '-mod=mod' } })
  for (const name of fs.readdirSync(out)) fs.renameSync(path.join(out, name), path.join(BIN_DIR, name))
  fs.rmSync(out, { recursive: true, force: true })
}

/**
 * A module of our own that requires k8s.io/kubernetes and, as its own go.mod does with ./staging,
 * replaces every k8s.io/* staging module, here by its published version.
 */
async function buildKubernetes (names) {
  const directory = path.join(CACHE_DIR, 'src', 'kubernetes')
  fs.mkdirSync(directory, { recursive: true })
  step(`building Kubernetes ${KUBERNETES_VERSION} (${names.join(', ')}) from its Go module: ~11 min on 2 cores, once`)
  const upstream = await kubernetesModuleDir()
  const staging = [...fs.readFileSync(path.join(upstream, 'go.mod'), 'utf8').matchAll(/^\s*(k8s\.io\/[\w.-]+) => \.\/staging\//gm)].map((match) => match[1])
  fs.writeFileSync(path.join(directory, 'go.mod'), `module ws-json-vs-protobuf/kubernetes\n\ngo 1.24.0\n\nrequire k8s.io/kubernetes ${KUBERNETES_VERSION}\n\n` +
    `replace (\n${staging.map((module) => `\t${module} => ${module} ${STAGING_VERSION}\n`).join('')})\n`)
  const packages = names.map((name) => `k8s.io/kubernetes/cmd/${name}`)
  await command('go', ['get', ...packages.map((pkg) => `${pkg}@${KUBERNETES_VERSION}`)], { cwd: directory })
  // What `kubectl version` and the node's kubeletVersion report; a build from a module has no git to ask.
  const [major, minor] = KUBERNETES_VERSION.slice(1).split('.')
  const ldflags = ['-s', '-w', ...['k8s.io/component-base/version', 'k8s.io/client-go/pkg/version'].flatMap((pkg) =>
    [`gitVersion=${KUBERNETES_VERSION}`, `gitMajor=${major}`, `gitMinor=${minor}`, 'gitTreeState=clean'].map((setting) => `-X ${pkg}.${setting}`))]
  await goBuild(directory, packages, ldflags.join(' '))
}

/** Where the Go module cache holds k8s.io/kubernetes (downloaded if it is not there). */
async function kubernetesModuleDir () {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-gomod-'))
  try {
    return JSON.parse(await command('go', ['mod', 'download', '-json', `k8s.io/kubernetes@${KUBERNETES_VERSION}`], { cwd: scratch })).Dir
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true })
  }
}

/** CoreDNS with only what the cluster's DNS needs (bind, errors, kubernetes): a fraction of the full build. */
async function buildCoreDns () {
  const directory = path.join(CACHE_DIR, 'src', 'coredns')
  fs.mkdirSync(directory, { recursive: true })
  step(`building CoreDNS ${COREDNS_VERSION} from its Go module, once`)
  fs.writeFileSync(path.join(directory, 'go.mod'), `module ws-json-vs-protobuf/coredns\n\ngo 1.24.0\n\nrequire github.com/coredns/coredns ${COREDNS_VERSION}\n`)
  fs.writeFileSync(path.join(directory, 'main.go'), `// CoreDNS with the plugins a one-node cluster's DNS needs (written by bench/support/one-node-cluster.js).
package main

import (
\t"github.com/coredns/coredns/core/dnsserver"
\t"github.com/coredns/coredns/coremain"
\t_ "github.com/coredns/coredns/plugin/bind"
\t_ "github.com/coredns/coredns/plugin/errors"
\t_ "github.com/coredns/coredns/plugin/kubernetes"
)

func init() { dnsserver.Directives = []string{"bind", "errors", "kubernetes"} }

func main() { coremain.Run() }
`)
  await command('go', ['get', `github.com/coredns/coredns@${COREDNS_VERSION}`], { cwd: directory })
  await command('go', ['mod', 'tidy'], { cwd: directory })
  await goBuild(directory, ['.'], '-s -w')
}

/** The pods' sandbox process, from the same release's build/pause/linux/pause.c, static. */
async function buildPause () {
  step('building the pause program (gcc, static)')
  const source = path.join(await kubernetesModuleDir(), 'build/pause/linux/pause.c')
  const out = path.join(BIN_DIR, 'pause.tmp')
  await command('nice', ['-n', '19', 'gcc', '-Os', '-static', `-DVERSION=${KUBERNETES_VERSION}`, '-o', out, source])
  fs.renameSync(out, path.join(BIN_DIR, 'pause'))
}

/**
 * The pause image, made with podman from the pause program alone, for containerd's sandboxes.
 * @param {NodeJS.ProcessEnv} env podman's environment
 * @param {string} work a scratch directory
 * @returns {Promise<string>} the image's name
 */
export async function buildPauseImage (env, work) {
  if (spawnSync('podman', ['image', 'exists', PAUSE_IMAGE], { env }).status === 0) return PAUSE_IMAGE
  const layer = path.join(work, 'pause.tar')
  await command('tar', ['-C', BIN_DIR, '-cf', layer, 'pause'])
  await command('podman', ['import', '--change', 'ENTRYPOINT ["/pause"]', '--change', 'USER 65535:65535', layer, PAUSE_IMAGE], { env })
  fs.rmSync(layer)
  return PAUSE_IMAGE
}

/**
 * This machine's own IPv4 address (the one its default route leaves from): the API server's
 * advertise address, which may not be loopback, and the node's. Traffic to it never leaves the machine.
 * @returns {string}
 */
function nodeAddress () {
  const route = spawnSync('ip', ['-4', '-o', 'route', 'get', '192.0.2.1'], { encoding: 'utf8' }).stdout
  const source = /\bsrc (\d+\.\d+\.\d+\.\d+)/.exec(route)?.[1]
  if (source && !source.startsWith('127.')) return source
  const address = Object.values(os.networkInterfaces()).flat().find((entry) => entry.family === 'IPv4' && !entry.internal)
  if (!address) throw new UsageError('a one-node cluster needs a non-loopback IPv4 address for the API server to advertise; this machine has none')
  return address.address
}

/**
 * What of the host the cluster may change: links, network namespaces, our kind of iptables chains,
 * mounts under the run directory, cgroups, sysctls, host directories.
 */
function hostState (runDir) {
  const lines = (program, args) => spawnSync(program, args, { encoding: 'utf8' }).stdout?.split('\n').filter(Boolean) ?? []
  const chains = []
  for (const program of ['iptables-save', 'ip6tables-save']) {
    let table = ''
    for (const line of lines(program, [])) {
      if (line.startsWith('*')) table = line.slice(1)
      const chain = /^:(\S+)/.exec(line)?.[1]
      if (chain && OUR_CHAINS.test(chain)) chains.push(`${program.replace('-save', '')} -t ${table} ${chain}`)
    }
  }
  const mounts = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').map((line) => line.split(' ')[4]).filter(Boolean)
  return {
    links: lines('ip', ['-o', 'link', 'show']).map((line) => line.split(': ')[1].split('@')[0]),
    netns: fs.existsSync('/run/netns') ? fs.readdirSync('/run/netns') : [],
    chains,
    mounts: mounts.filter((point) => point.startsWith(`${runDir}/`) || point.startsWith('/run/netns/cni-')),
    cgroups: cgroupRoots().filter((dir) => fs.existsSync(path.join(dir, 'kubepods'))).map((dir) => path.join(dir, 'kubepods')),
    sysctls: Object.fromEntries(SYSCTLS.filter((key) => fs.existsSync(`/proc/sys/${key}`)).map((key) => [key, fs.readFileSync(`/proc/sys/${key}`, 'utf8').trim()])),
    directories: HOST_DIRECTORIES.filter((dir) => fs.existsSync(dir))
  }
}

/** Each cgroup hierarchy's root: the v1 controllers' directories, or the one v2 tree. */
function cgroupRoots () {
  if (fs.existsSync('/sys/fs/cgroup/cgroup.controllers')) return ['/sys/fs/cgroup']
  return fs.readdirSync('/sys/fs/cgroup', { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => path.join('/sys/fs/cgroup', entry.name))
}

/** A cgroup directory and everything under it, deepest first (a cgroup goes only once it has no children). */
function removeCgroup (dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeCgroup(path.join(dir, entry.name))
  fs.rmdirSync(dir)
}

/** An X.509 certificate signed by the cluster's CA, made with openssl. */
async function certificate (pki, name, subject, { sans = [], usage = 'clientAuth' } = {}) {
  const file = (ext) => path.join(pki, `${name}.${ext}`)
  await command('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', subject,
    '-addext', `extendedKeyUsage=${usage}`, ...(sans.length ? ['-addext', `subjectAltName=${sans.join(',')}`] : []),
    '-keyout', file('key'), '-out', file('csr')])
  await command('openssl', ['x509', '-req', '-in', file('csr'), '-CA', path.join(pki, 'ca.crt'), '-CAkey', path.join(pki, 'ca.key'),
    '-CAcreateserial', '-days', '2', '-copy_extensions', 'copyall', '-out', file('crt')])
  return { cert: file('crt'), key: file('key') }
}

/** A kubeconfig for one component, with the CA and its client certificate as files. */
function kubeconfig (file, server, ca, { cert, key }) {
  fs.writeFileSync(file, `apiVersion: v1
kind: Config
clusters:
  - name: ws-bench
    cluster: { server: "${server}", certificate-authority: "${ca}" }
users:
  - name: ws-bench
    user: { client-certificate: "${cert}", client-key: "${key}" }
contexts:
  - name: ws-bench
    context: { cluster: ws-bench, user: ws-bench }
current-context: ws-bench
`)
  return file
}

/** Resolves once `port` can be listened on at `host`, rejects with one line when something holds it. */
function portFree (host, port) {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once('error', () => reject(new UsageError(`port ${port} on ${host} is in use: is another cluster (or bench:kubernetes) running here?`)))
    server.listen(port, host, () => server.close(resolve))
  })
}

/**
 * A one-node cluster: start() brings it up, close() takes it all down again, leftovers() checks.
 */
export class OneNodeCluster {
  constructor () {
    this.runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-bench-kubernetes-'))
    this.address = nodeAddress()
    this.daemons = []
    this.closing = false
    this.before = hostState(this.runDir)
    this.kubeconfig = path.join(this.runDir, 'admin.kubeconfig')
    this.logDir = path.join(this.runDir, 'logs')
    fs.mkdirSync(this.logDir)
  }

  /** The versions of every part, as the results record them. */
  versions () {
    const first = (program, args) => spawnSync(program, args, { encoding: 'utf8' }).stdout?.split('\n')[0].trim() ?? 'unknown'
    return {
      kubernetes: KUBERNETES_VERSION,
      coredns: COREDNS_VERSION,
      etcd: first('etcd', ['--version']).replace('etcd Version: ', ''),
      containerd: first('containerd', ['--version']).split(' ')[2],
      runc: first('runc', ['--version']).replace('runc version ', ''),
      cni: spawnSync('dpkg-query', ['-W', 'containernetworking-plugins'], { encoding: 'utf8' }).stdout.trim().split('\t')[1] ?? 'unknown'
    }
  }

  /**
   * Brings the cluster up, with `images` (podman image names) imported into containerd before the
   * kubelet starts: etcd, the API server, the controllers, containerd, the kubelet, kube-proxy, CoreDNS.
   * Resolves once the node is Ready.
   * @param {{images: string[], podmanEnv: NodeJS.ProcessEnv}} options
   */
  async start ({ images, podmanEnv }) {
    for (const [host, port] of [['127.0.0.1', ETCD_CLIENT_PORT], ['127.0.0.1', ETCD_PEER_PORT], [this.address, API_PORT], [this.address, KUBELET_PORT], [this.address, DNS_PORT]]) await portFree(host, port)
    const pki = path.join(this.runDir, 'pki')
    fs.mkdirSync(pki)
    const certs = await this.certificates(pki)
    const server = `https://${this.address}:${API_PORT}`
    const ca = path.join(pki, 'ca.crt')
    const config = (name) => kubeconfig(path.join(this.runDir, `${name}.kubeconfig`), server, ca, certs[name])
    kubeconfig(this.kubeconfig, server, ca, certs.admin)

    step(`starting etcd, kube-apiserver on ${this.address}:${API_PORT}`)
    const etcdUrl = `http://127.0.0.1:${ETCD_CLIENT_PORT}`
    const peerUrl = `http://127.0.0.1:${ETCD_PEER_PORT}`
    this.daemon('etcd', 'etcd', ['--name', 'ws-bench', '--data-dir', path.join(this.runDir, 'etcd'), '--listen-client-urls', etcdUrl,
      '--advertise-client-urls', etcdUrl, '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', `ws-bench=${peerUrl}`, '--logger', 'zap', '--log-level', 'warn'])
    this.daemon('kube-apiserver', this.bin('kube-apiserver'), [
      `--advertise-address=${this.address}`, `--bind-address=${this.address}`, `--secure-port=${API_PORT}`, `--etcd-servers=${etcdUrl}`,
      `--service-cluster-ip-range=${SERVICE_CIDR}`, `--client-ca-file=${ca}`, `--tls-cert-file=${certs.apiserver.cert}`, `--tls-private-key-file=${certs.apiserver.key}`,
      '--kubelet-preferred-address-types=InternalIP', `--kubelet-client-certificate=${certs['apiserver-kubelet-client'].cert}`, `--kubelet-client-key=${certs['apiserver-kubelet-client'].key}`,
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local', `--service-account-key-file=${path.join(pki, 'sa.pub')}`,
      `--service-account-signing-key-file=${path.join(pki, 'sa.key')}`, '--authorization-mode=Node,RBAC', '--enable-admission-plugins=NodeRestriction',
      '--profiling=false'])
    await this.until('the API server is ready', () => this.apiReady(ca, certs.admin), 120_000)

    step('starting kube-controller-manager, kube-scheduler, containerd')
    this.daemon('kube-controller-manager', this.bin('kube-controller-manager'), [`--kubeconfig=${config('controller-manager')}`,
      '--leader-elect=false', '--secure-port=0', '--use-service-account-credentials=true', `--root-ca-file=${ca}`,
      `--service-account-private-key-file=${path.join(pki, 'sa.key')}`, `--service-cluster-ip-range=${SERVICE_CIDR}`])
    this.daemon('kube-scheduler', this.bin('kube-scheduler'), [`--kubeconfig=${config('scheduler')}`, '--leader-elect=false', '--secure-port=0'])
    const socket = this.startContainerd()
    await this.until('containerd is up', () => command('ctr', ['--address', socket, 'version']).then(() => true, () => false), 30_000)

    step(`importing ${images.join(', ')} into containerd`)
    for (const image of images) {
      const archive = path.join(this.runDir, 'image.tar')
      await command('podman', ['save', '-o', archive, image], { env: podmanEnv })
      await command('ctr', ['--address', socket, '-n', 'k8s.io', 'images', 'import', archive])
      fs.rmSync(archive)
    }

    step('starting the kubelet, kube-proxy, CoreDNS')
    this.startKubelet(socket, config('kubelet'), ca)
    this.startKubeProxy(config('kube-proxy'))
    await this.apply('coredns-rbac', COREDNS_RBAC)
    this.startCoreDns(config('coredns'))
    await this.until(`node ${NODE_NAME} is Ready`, async () => {
      const node = await this.kubectl(['get', 'node', NODE_NAME, '-o', 'json']).then(JSON.parse, () => null)
      return node?.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True')
    }, 120_000)
  }

  /** The CA, each component's client certificate, the API server's serving one, the service-account key. */
  async certificates (pki) {
    await command('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
      '-subj', '/CN=ws-bench-kubernetes-ca', '-keyout', path.join(pki, 'ca.key'), '-out', path.join(pki, 'ca.crt')])
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
    fs.writeFileSync(path.join(pki, 'sa.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
    fs.writeFileSync(path.join(pki, 'sa.pub'), publicKey.export({ type: 'spki', format: 'pem' }))
    const apiNames = ['kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']
    const clients = {
      admin: '/O=system:masters/CN=ws-bench-admin',
      'apiserver-kubelet-client': '/O=system:masters/CN=kube-apiserver-kubelet-client',
      'controller-manager': '/CN=system:kube-controller-manager',
      scheduler: '/CN=system:kube-scheduler',
      kubelet: `/O=system:nodes/CN=system:node:${NODE_NAME}`,
      'kube-proxy': '/CN=system:kube-proxy',
      coredns: '/CN=ws-bench:coredns'
    }
    const certs = {
      apiserver: await certificate(pki, 'apiserver', '/CN=kube-apiserver', {
        usage: 'serverAuth',
        sans: [`IP:${this.address}`, `IP:${API_SERVICE_IP}`, ...apiNames.map((name) => `DNS:${name}`)]
      })
    }
    for (const [name, subject] of Object.entries(clients)) certs[name] = await certificate(pki, name, subject)
    return certs
  }

  /** A binary of the cache's. */
  bin (name) {
    return path.join(BIN_DIR, name)
  }

  /** containerd with its root, state and socket in the run directory, CRI's CNI config there too. */
  startContainerd () {
    const dir = path.join(this.runDir, 'containerd')
    const cniDir = path.join(this.runDir, 'cni')
    fs.mkdirSync(cniDir, { recursive: true })
    fs.mkdirSync(dir, { recursive: true })
    const socket = path.join(dir, 'containerd.sock')
    // The bridge plugin without masquerading: pods talk to each other and to this host, nowhere else.
    fs.writeFileSync(path.join(cniDir, '10-ws-bench.conflist'), JSON.stringify({
      cniVersion: '1.0.0',
      name: 'ws-bench',
      plugins: [
        { type: 'bridge', bridge: BRIDGE, isGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: 'host-local', ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: path.join(this.runDir, 'cni-ipam') } },
        { type: 'loopback' }
      ]
    }))
    fs.writeFileSync(path.join(dir, 'config.toml'), `version = 2
root = "${dir}/root"
state = "${dir}/state"
[grpc]
  address = "${socket}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${dir}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # Root here lacks CAP_SYS_RESOURCE: no process may be given a lower OOM score than containerd's own.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${cniDir}"
`)
    this.containerdSocket = socket
    this.daemon('containerd', 'containerd', ['--config', path.join(dir, 'config.toml')])
    return socket
  }

  /** The kubelet, its root directory in the run directory, serving the API server with its own certificate (x509 clients of the cluster's CA, authorized by the API server). */
  startKubelet (socket, kubeconfigFile, ca) {
    const dir = path.join(this.runDir, 'kubelet')
    fs.mkdirSync(dir)
    const config = path.join(this.runDir, 'kubelet.yaml')
    fs.writeFileSync(config, `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://${socket}
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
address: ${this.address}
port: ${KUBELET_PORT}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: ${ca} }
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [${this.address}]
podLogsDir: ${path.join(this.runDir, 'pod-logs')}
# Nothing can be pulled here: the images imported into containerd must never be collected.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: { memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1% }
`)
    this.daemon('kubelet', this.bin('kubelet'), [`--config=${config}`, `--kubeconfig=${kubeconfigFile}`, `--root-dir=${dir}`,
      `--cert-dir=${path.join(dir, 'pki')}`, `--hostname-override=${NODE_NAME}`, `--node-ip=${this.address}`])
  }

  /** kube-proxy in iptables mode: the Service's address reaches the server pod. */
  startKubeProxy (kubeconfigFile) {
    const config = path.join(this.runDir, 'kube-proxy.yaml')
    // conntrack left as the machine has it (maxPerCore 0, timeouts 0s); no route_localnet (localhostNodePorts off).
    fs.writeFileSync(config, `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clusterCIDR: ${POD_CIDR}
hostnameOverride: ${NODE_NAME}
clientConnection: { kubeconfig: ${kubeconfigFile} }
bindAddress: ${this.address}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
iptables: { localhostNodePorts: false }
conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s, udpTimeout: 0s, udpStreamTimeout: 0s }
`)
    this.kubeProxyConfig = config
    this.daemon('kube-proxy', this.bin('kube-proxy'), [`--config=${config}`])
  }

  /** CoreDNS on this host's address, the pods' nameserver (the kubelet's clusterDNS): Service names resolve to their addresses. */
  startCoreDns (kubeconfigFile) {
    const corefile = path.join(this.runDir, 'Corefile')
    fs.writeFileSync(corefile, `.:${DNS_PORT} {
    bind ${this.address}
    errors
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig ${kubeconfigFile} ws-bench
    }
}
`)
    this.daemon('coredns', this.bin('coredns'), ['-conf', corefile])
  }

  /**
   * Starts a long-running part in a process group of its own, its output in logs/<name>.log.
   * Refused once close() has begun, so that an interrupted start leaves nothing running.
   */
  daemon (name, program, args) {
    if (this.closing) throw new Error('the cluster is being torn down')
    const log = fs.openSync(path.join(this.logDir, `${name}.log`), 'a')
    const child = spawn(program, args, { detached: true, stdio: ['ignore', log, log] })
    fs.closeSync(log)
    const entry = { name, child, exited: new Promise((resolve) => child.once('exit', resolve)), running: true }
    child.once('exit', () => { entry.running = false })
    child.once('error', () => { entry.running = false })
    this.daemons.push(entry)
  }

  /** The last line of a part's log, for an error message. */
  lastLogLine (name) {
    const file = path.join(this.logDir, `${name}.log`)
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').pop() : ''
  }

  /** Polls `check` until it is true; fails sooner when one of the parts has died, naming it with its log's last line. */
  async until (what, check, timeoutMs) {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const dead = this.daemons.find((entry) => !entry.running)
      if (dead) throw new Error(`${dead.name} exited while waiting until ${what}: ${this.lastLogLine(dead.name)}`)
      if (this.closing) throw new Error(`torn down while waiting until ${what}`)
      if (await check()) return
      await sleep(500)
    }
    throw new Error(`timed out after ${timeoutMs / 1000} s waiting until ${what}`)
  }

  /** Whether the API server answers /readyz with 200. */
  apiReady (ca, { cert, key }) {
    return new Promise((resolve) => {
      const request = https.get({ host: this.address, port: API_PORT, path: '/readyz', ca: fs.readFileSync(ca), cert: fs.readFileSync(cert), key: fs.readFileSync(key), timeout: 2000 },
        (response) => { response.resume(); resolve(response.statusCode === 200) })
      request.on('error', () => resolve(false))
      request.on('timeout', () => request.destroy())
    })
  }

  /**
   * kubectl, the one built with the cluster, as the cluster's admin.
   * @param {string[]} args
   * @returns {Promise<string>} its stdout
   */
  kubectl (args) {
    return command(KUBECTL, [...args, '--kubeconfig', this.kubeconfig])
  }

  /** Applies a manifest given as text. */
  async apply (name, manifest) {
    const file = path.join(this.runDir, `${name}.yaml`)
    fs.writeFileSync(file, manifest)
    return this.kubectl(['apply', '-f', file])
  }

  /**
   * Takes everything down, in order, then removes what a part that died or was killed left: the
   * pods first (through the API, so the kubelet unmounts their volumes and CNI removes their network),
   * then the parts, containerd's tasks, kube-proxy's rules, and what is still on the host.
   * @param {string[]} [namespaces] Kubernetes namespaces to delete first
   */
  async close (namespaces = []) {
    if (this.closing) return this.closed
    this.closing = true
    this.closed = this.tearDown(namespaces)
    return this.closed
  }

  /** close()'s work, once. */
  async tearDown (namespaces) {
    const running = (name) => this.daemons.some((entry) => entry.name === name && entry.running)
    if (running('kube-apiserver') && running('kubelet')) {
      for (const namespace of namespaces) {
        await this.kubectl(['delete', 'namespace', namespace, '--ignore-not-found', '--timeout=90s']).catch((err) => step(`deleting namespace ${namespace}: ${err.message}`))
      }
    }
    for (const name of ['coredns', 'kube-proxy', 'kubelet', 'kube-scheduler', 'kube-controller-manager']) await this.stop(name)
    if (running('containerd')) await this.removeContainers()
    await this.stop('containerd')
    await this.stop('kube-apiserver')
    await this.stop('etcd')
    if (this.kubeProxyConfig) {
      await command(this.bin('kube-proxy'), ['--cleanup', `--config=${this.kubeProxyConfig}`]).catch((err) => step(`kube-proxy --cleanup: ${err.message}`))
    }
    this.sweep()
    fs.rmSync(this.runDir, { recursive: true, force: true })
  }

  /** SIGTERM to a part's process group, SIGKILL after 5 s (the API server may not stop otherwise). */
  async stop (name) {
    for (const entry of this.daemons.filter((d) => d.name === name && d.running)) {
      const signal = (sig) => { try { process.kill(-entry.child.pid, sig) } catch {} }
      signal('SIGTERM')
      const stopped = await Promise.race([entry.exited.then(() => true), sleep(5000).then(() => false)])
      if (!stopped) {
        signal('SIGKILL')
        await entry.exited
      }
    }
  }

  /** Every container containerd still runs (a pod the API could not delete): killed, then removed with its shim. */
  async removeContainers () {
    const ctr = (args) => command('ctr', ['--address', this.containerdSocket, '-n', 'k8s.io', ...args])
    const ids = (await ctr(['containers', 'list', '-q']).catch(() => '')).split('\n').filter(Boolean)
    for (const id of ids) {
      await ctr(['tasks', 'kill', '-s', 'SIGKILL', id]).catch(() => {})
      await ctr(['tasks', 'delete', '-f', id]).catch(() => {})
      await ctr(['containers', 'delete', id]).catch(() => {})
    }
    if (ids.length) step(`removed ${ids.length} containers left in containerd`)
  }

  /**
   * What a killed part leaves: new network namespaces (a pod's, when CNI was not asked to remove
   * it), mounts under the run directory, the bridge, cgroups, KUBE-/CNI- chains, sysctls changed,
   * host directories made. Each is removed and named on stderr.
   */
  sweep () {
    const now = hostState(this.runDir)
    const run = (program, args) => spawnSync(program, args, { stdio: 'ignore' }).status === 0
    for (const point of [...now.mounts].reverse()) if (run('umount', ['-l', point])) step(`unmounted ${point}`)
    for (const name of now.netns.filter((ns) => !this.before.netns.includes(ns) && ns.startsWith('cni-'))) if (run('ip', ['netns', 'delete', name])) step(`removed network namespace ${name}`)
    if (now.links.includes(BRIDGE) && run('ip', ['link', 'delete', BRIDGE])) step(`removed bridge ${BRIDGE}`)
    for (const dir of now.cgroups.filter((cgroup) => !this.before.cgroups.includes(cgroup))) {
      try { removeCgroup(dir) } catch (err) { step(`cgroup ${dir}: ${err.message}`) }
    }
    const chains = now.chains.filter((c) => !this.before.chains.includes(c)).map((chain) => chain.split(' '))
    for (const [program, , table, name] of chains) {
      // A chain that a rule jumps to cannot be deleted: those rules go first (the kubelet's KUBE-FIREWALL from INPUT, OUTPUT).
      const rules = spawnSync(program, ['-t', table, '-S'], { encoding: 'utf8' }).stdout.split('\n')
      for (const rule of rules.filter((line) => line.startsWith('-A ') && new RegExp(` -[jg] ${name}( |$)`).test(line))) {
        run(program, ['-t', table, '-D', ...rule.slice(3).match(/"[^"]*"|\S+/g).map((word) => word.replace(/^"(.*)"$/, '$1'))])
      }
    }
    for (const [program, , table, name] of chains) run(program, ['-t', table, '-F', name])
    for (const [program, , table, name] of chains) if (run(program, ['-t', table, '-X', name])) step(`removed ${program} -t ${table} ${name}`)
    for (const [key, value] of Object.entries(this.before.sysctls)) {
      if (now.sysctls[key] !== value) {
        fs.writeFileSync(`/proc/sys/${key}`, value)
        step(`restored ${key.replaceAll('/', '.')} = ${value} (was set to ${now.sysctls[key]})`)
      }
    }
    for (const dir of HOST_DIRECTORIES.filter((d) => !this.before.directories.includes(d))) fs.rmSync(dir, { recursive: true, force: true })
  }

  /**
   * What the cluster left on this machine after close(), against the snapshot taken before it
   * started: processes, network namespaces, links, iptables chains, mounts, cgroups, sysctls, directories.
   * @returns {string[]} one line per thing left; empty when the machine is as it was
   */
  leftovers () {
    const now = hostState(this.runDir)
    const added = (key) => now[key].filter((item) => !this.before[key].includes(item))
    const left = [
      ...this.daemons.filter((entry) => entry.running).map((entry) => `process ${entry.name} (pid ${entry.child.pid})`),
      ...strayProcesses(this.runDir).map((line) => `process ${line}`),
      ...added('netns').map((ns) => `network namespace ${ns}`),
      ...added('links').map((link) => `network link ${link}`),
      ...added('chains').map((chain) => `iptables chain ${chain}`),
      ...added('mounts').map((point) => `mount ${point}`),
      ...added('cgroups').map((dir) => `cgroup ${dir}`),
      ...added('directories').map((dir) => `directory ${dir}`),
      ...Object.entries(this.before.sysctls).filter(([key, value]) => now.sysctls[key] !== value).map(([key, value]) => `sysctl ${key} = ${now.sysctls[key]} (was ${value})`)
    ]
    if (fs.existsSync(this.runDir)) left.push(`directory ${this.runDir}`)
    return left
  }
}

/** Processes of the cluster still alive: a containerd shim (it names the run directory's socket) or anything in a pod's cgroup. */
function strayProcesses (runDir) {
  const stray = []
  for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim()
      const cgroup = fs.readFileSync(`/proc/${pid}/cgroup`, 'utf8')
      if (cmdline.includes(runDir) || /\/kubepods\b/.test(cgroup)) stray.push(`${pid} ${cmdline.slice(0, 80)}`)
    } catch {} // gone meanwhile
  }
  return stray
}

/** CoreDNS's read access to what it answers for (its kubeconfig's user is ws-bench:coredns). */
const COREDNS_RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ws-bench:coredns
rules:
  - apiGroups: [""]
    resources: [services, namespaces]
    verbs: [list, watch]
  - apiGroups: [discovery.k8s.io]
    resources: [endpointslices]
    verbs: [list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ws-bench:coredns
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ws-bench:coredns
subjects:
  - apiGroup: rbac.authorization.k8s.io
    kind: User
    name: ws-bench:coredns
`
