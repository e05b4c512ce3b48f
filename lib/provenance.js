// What made a result: the method of each command that measured it, and the commit of the code that
// ran. A method is a name and a version, bumped when a change alters what the command measures (a
// design, a schedule, a pacing), with the time it took effect: a result from an older method is
// stale, and the docs refuse to show it (npm run docs:results -- --check).
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The project's root: the checkout whose commit is asked for. */
const ROOT = fileURLToPath(new URL('..', import.meta.url))

/**
 * @typedef {object} Method
 * @property {string} name e.g. 'compare', 'bench:hosts'
 * @property {number} version bumped when a change alters what is measured
 * @property {string} since ISO time the version took effect: a result recorded before it, with no
 *   version of its own (written before results recorded one), is from an older method
 */

/**
 * The commit of the code here, with `+changes` when tracked files other than the docs differ from
 * it; null outside a git checkout (an installed package).
 * @param {string} [root]
 * @returns {string|null}
 */
export function sourceCommit (root = ROOT) {
  const git = (...args) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  try {
    const commit = git('rev-parse', '--short=12', 'HEAD')
    // Result files and docs written since (a run records into docs/results/) are not the code.
    return git('status', '--porcelain', '--untracked-files=no', '--', '.', ':!docs') ? `${commit}+changes` : commit
  } catch {
    return null
  }
}

/**
 * What a result records of what made it.
 * @param {Method[]} methods
 * @returns {{methods: Record<string, number>, commit: string|null}}
 */
export function provenanceOf (methods) {
  return { methods: Object.fromEntries(methods.map(({ name, version }) => [name, version])), commit: sourceCommit() }
}

/**
 * The methods a result is older than: recorded at an earlier version, or, for a result that
 * recorded none, started before the current version took effect.
 * @param {{methods?: Record<string, number>, startedAt?: string}} result
 * @param {Method[]} methods the current methods of the command that made it
 * @returns {Array<Method & {recorded: number|null}>}
 */
export function outdatedMethods (result, methods) {
  return methods.map((method) => ({ ...method, recorded: result.methods?.[method.name] ?? null }))
    .filter(({ recorded, version, since }) => recorded === null ? !(result.startedAt >= since) : recorded < version)
}
