// A checkout of an earlier commit beside this one, for benchmarks that measure before and after
// in the same run (BENCH_BEFORE): a temporary git worktree sharing node_modules and the code that
// npm ci generates.
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PROJECT_ROOT } from '../../lib/processes.js'

/**
 * Checks out `ref` into a temporary directory.
 * @param {string} ref a git commit, tag or branch
 * @returns {{dir: string, remove: () => void}}
 */
export function checkout (ref) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-before-'))
  execFileSync('git', ['worktree', 'add', '--detach', dir, ref], { cwd: PROJECT_ROOT, stdio: 'ignore' })
  fs.symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(dir, 'node_modules'))
  fs.copyFileSync(path.join(PROJECT_ROOT, 'proto/generated.js'), path.join(dir, 'proto/generated.js'))
  const help = path.join(PROJECT_ROOT, 'lib/cli/help')
  if (fs.existsSync(help)) fs.cpSync(help, path.join(dir, 'lib/cli/help'), { recursive: true })
  return {
    dir,
    remove: () => execFileSync('git', ['worktree', 'remove', '--force', dir], { cwd: PROJECT_ROOT, stdio: 'ignore' })
  }
}
