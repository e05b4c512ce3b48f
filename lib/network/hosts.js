// Test hosts on one machine: network namespaces on a bridge, each with its own address in a
// private /24 this harness picks and owns, running the project's own server and clients. Traffic
// goes only to the addresses of the namespaces it made. Everything it creates (namespaces, the
// bridge, the processes it started) is torn down by close(), on failure, and on SIGINT/SIGTERM.
import { execFile, spawn } from 'node:child_process'
import { promisify } from 'node:util'
import { PROJECT_ROOT, undoOnSignal } from '../processes.js'

const run = promisify(execFile)

/** Every name this harness creates starts so: namespaces `wsbh<id>-<host>`, the bridge `wsbh<id>`. */
const NAME_PREFIX = 'wsbh'

/**
 * Why test hosts cannot be made here, or false when they can: they need Linux, root and `ip netns`.
 * @returns {Promise<string|false>}
 */
export async function hostsUnavailableReason () {
  if (process.platform !== 'linux') return `test hosts need Linux network namespaces, not ${process.platform}`
  if (process.getuid?.() !== 0) return 'test hosts need root (ip netns, veth, a bridge)'
  const probe = `${NAME_PREFIX}probe${process.pid % 100000}`
  try {
    await run('ip', ['netns', 'add', probe])
    await run('ip', ['netns', 'del', probe])
    return false
  } catch (err) {
    return `ip netns does not work here: ${String(err.stderr || err.message).trim().split('\n')[0]}`
  }
}

/**
 * @typedef {object} Host
 * @property {string} name the host's name (`server`, `client1`, ...)
 * @property {string} namespace its network namespace
 * @property {string} address its IPv4 address on the bridge
 * @property {string} device its veth interface, inside its namespace
 * @property {string} peer the other end of that veth, the host's port on the bridge
 */

/**
 * Creates a server host and `clients` client hosts on one bridge.
 * @param {{clients: number}} options
 * @returns {Promise<{id: string, server: Host, clients: Host[], hosts: Host[], start: Function, node: Function,
 *   exec: Function, cut: (host: Host) => Promise<() => Promise<void>>, close: () => Promise<void>}>}
 *   id: the prefix of everything it created (for leftovers(id));
 *   start(host, command, args, {env}) starts a program in the host (a ChildProcess, killed by close());
 *   node(host, script, args, {env}) starts a project script there the same way;
 *   exec(host, command, args) runs a command there and resolves with its output;
 *   cut(host) takes the host off the network until the function it resolves with is called (see cutLink)
 */
export async function createTestHosts ({ clients }) {
  const id = `${process.pid % 10000}${Math.floor(Math.random() * 100)}`.slice(0, 6)
  // A /24 in 10.0.0.0/8 from the id: two harnesses at once get different subnets (and bridges).
  const subnet = `10.${200 + (Number(id) % 50)}.${Number(id) % 250}`
  const bridge = `${NAME_PREFIX}${id}`
  const hosts = ['server', ...Array.from({ length: clients }, (_, i) => `client${i + 1}`)].map((name, i) => ({
    name,
    namespace: `${bridge}-${name}`,
    address: `${subnet}.${i + 10}`,
    device: `eth${i}`,
    peer: `${bridge}p${i}`
  }))
  const children = new Set()
  const close = undoOnSignal(() => teardown(bridge, hosts, children))
  try {
    await run('ip', ['link', 'add', bridge, 'type', 'bridge'])
    await run('ip', ['link', 'set', bridge, 'up'])
    for (const host of hosts) {
      await run('ip', ['netns', 'add', host.namespace])
      await run('ip', ['link', 'add', host.peer, 'type', 'veth', 'peer', 'name', host.device, 'netns', host.namespace])
      await run('ip', ['link', 'set', host.peer, 'master', bridge, 'up'])
      await run('ip', ['-n', host.namespace, 'addr', 'add', `${host.address}/24`, 'dev', host.device])
      await run('ip', ['-n', host.namespace, 'link', 'set', host.device, 'up'])
      await run('ip', ['-n', host.namespace, 'link', 'set', 'lo', 'up'])
      // Every local port: a host's reconnecting clients hold new ports while their old sockets,
      // cut off, still retransmit their goodbyes; 25,000 of each outgrow the default 28,000 ports.
      await run('ip', ['netns', 'exec', host.namespace, 'sysctl', '-qw', 'net.ipv4.ip_local_port_range=1024 65535'])
    }
  } catch (err) {
    await close()
    throw new Error(`cannot create test hosts: ${String(err.stderr || err.message).trim().split('\n')[0]}`)
  }
  const start = (host, command, args = [], { env = {} } = {}) => {
    const child = spawn('ip', ['netns', 'exec', host.namespace, command, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    children.add(child)
    child.once('exit', () => children.delete(child))
    return child
  }
  const node = (host, script, args = [], options) => start(host, process.execPath, [script, ...args], options)
  const exec = (host, command, args = []) => run('ip', ['netns', 'exec', host.namespace, command, ...args], { maxBuffer: 64 * 1024 * 1024 })
  return { id: bridge, server: hosts[0], clients: hosts.slice(1), hosts, start, node, exec, cut: cutLink, close }
}

/**
 * Takes a host off the network until `restore` is called: its bridge port stops forwarding, both
 * ways. The host's own interface stays up with its carrier, so its connections stall silently, as
 * behind a dead link (TCP retransmits, then resumes), where a downed interface would fail them at
 * once (ENETUNREACH). close() removes the port with everything else, so no cut outlives the harness.
 * @param {Host} host
 * @returns {Promise<() => Promise<void>>} restore: the port forwards again
 */
async function cutLink (host) {
  // Setting a port's state by hand works while the bridge runs no spanning tree (the default).
  await run('bridge', ['link', 'set', 'dev', host.peer, 'state', '0'])
  return () => run('bridge', ['link', 'set', 'dev', host.peer, 'state', '3']).then(() => {})
}

/**
 * Kills what the harness started, then removes the veth pairs (deleting one end takes the other at
 * once; a namespace's deletion would take them only later), the namespaces and the bridge.
 */
async function teardown (bridge, hosts, children) {
  await Promise.all([...children].map((child) => new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once('exit', resolve)
    child.kill('SIGKILL')
  })))
  for (const host of hosts) await run('ip', ['link', 'del', host.peer]).catch(() => {})
  for (const host of hosts) await run('ip', ['netns', 'del', host.namespace]).catch(() => {})
  await run('ip', ['link', 'del', bridge]).catch(() => {})
}

/**
 * What a harness has left on the machine: namespaces and links whose names start with the prefix.
 * @param {string} [prefix] one harness's id, or every harness's NAME_PREFIX
 * @returns {Promise<string[]>} empty when everything is gone
 */
export async function leftovers (prefix = NAME_PREFIX) {
  const { stdout: namespaces } = await run('ip', ['netns', 'list'])
  const { stdout: links } = await run('ip', ['-o', 'link', 'show'])
  return [
    ...namespaces.split('\n').map((line) => line.split(' ')[0]).filter((name) => name.startsWith(prefix)),
    ...links.split('\n').map((line) => line.split(':')[1]?.trim().split('@')[0]).filter((name) => name?.startsWith(prefix))
  ]
}
