// The Go reference server (servers/go/, docs/protocol.md): where it is, whether Go is here, and
// building it when its sources are newer than its binary. The binary is then run as it is, never
// under a wrapper, so that the process a starter holds is the server (docs/protocol.md, "CPU").
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../processes.js'

export const GO_SERVER_DIR = path.join(PROJECT_ROOT, 'servers', 'go')
export const GO_SERVER_BINARY = path.join(GO_SERVER_DIR, 'bin', 'wsbench-server')

/** Whether a `go` command runs here. */
export function goAvailable () {
  const run = spawnSync('go', ['version'], { stdio: 'ignore' })
  return run.status === 0
}

/** The newest modification time among the module's sources (.go, go.mod, go.sum), bin/ aside. */
function newestSource (dir = GO_SERVER_DIR) {
  let newest = 0
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'bin') newest = Math.max(newest, newestSource(file))
    } else if (/\.go$|^go\.(mod|sum)$/.test(entry.name)) {
      newest = Math.max(newest, fs.statSync(file).mtimeMs)
    }
  }
  return newest
}

/**
 * Builds the Go server unless its binary is newer than every source, and returns the binary's path.
 * @param {{force?: boolean, output?: 'inherit'|'pipe'}} [options] output: where go's own output goes
 * @returns {string}
 * @throws {Error} when go is missing or the build fails, with go's output
 */
export function buildGoServer ({ force = false, output = 'pipe' } = {}) {
  const upToDate = fs.existsSync(GO_SERVER_BINARY) && fs.statSync(GO_SERVER_BINARY).mtimeMs >= newestSource()
  if (!force && upToDate) return GO_SERVER_BINARY
  const run = spawnSync('go', ['build', '-o', GO_SERVER_BINARY, '.'], {
    cwd: GO_SERVER_DIR, encoding: 'utf8', stdio: ['ignore', output, output]
  })
  if (run.error) {
    const why = run.error.code === 'ENOENT' ? 'no go command on PATH (https://go.dev/dl/)' : run.error.message
    throw new Error(`cannot build the Go server: ${why}`)
  }
  if (run.status !== 0) throw new Error(`cannot build the Go server (go build exited with ${run.status})${run.stderr ? `:\n${run.stderr}` : ''}`)
  return GO_SERVER_BINARY
}
