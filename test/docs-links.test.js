// Every relative link in the project's markdown (README.md, docs/, deploy/, servers/go/) reaches a
// file that exists, and every #anchor in it a heading of that page, as GitHub makes heading anchors.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { PROJECT_ROOT } from '../lib/processes.js'

const PAGES = ['README.md', 'deploy/README.md', 'servers/go/README.md',
  ...fs.readdirSync(path.join(PROJECT_ROOT, 'docs')).filter((file) => file.endsWith('.md')).map((file) => `docs/${file}`)]

/** A page's text with its fenced code blocks blanked out: links and headings there are examples. */
function prose (page) {
  return fs.readFileSync(path.join(PROJECT_ROOT, page), 'utf8').replace(/^```[^]*?^```/gm, '')
}

/**
 * The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens,
 * a repeated heading numbered from -1.
 * @param {string} page a markdown file, relative to the project
 * @returns {Set<string>}
 */
function anchorsOf (page) {
  const anchors = new Set()
  for (const [, heading] of prose(page).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replaceAll(' ', '-')
    let anchor = slug
    for (let n = 1; anchors.has(anchor); n++) anchor = `${slug}-${n}`
    anchors.add(anchor)
  }
  return anchors
}

test('every relative link in the markdown reaches a file, and every anchor a heading', () => {
  const broken = []
  for (const page of PAGES) {
    for (const [, target] of prose(page).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue // http:, https:, mailto:
      const [file, anchor] = target.split('#')
      const linked = file ? path.join(path.dirname(page), file) : page
      if (!fs.existsSync(path.join(PROJECT_ROOT, linked))) broken.push(`${page}: ${target} (no such file)`)
      else if (anchor && linked.endsWith('.md') && !anchorsOf(linked).has(anchor)) broken.push(`${page}: ${target} (no such heading)`)
    }
  }
  assert.deepEqual(broken, [])
})
