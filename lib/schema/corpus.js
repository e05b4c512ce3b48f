// A user's traffic as a corpus: one JSON document, a JSON Lines file (.jsonl, .ndjson: one
// message per line) or a directory of .json files (one message each, in name order). Every
// message is read exactly (integers past 2^53 stay exact) and named by where it came from.
import { readFile, readdir, stat } from 'node:fs/promises'
import path from 'node:path'
import { UsageError } from '../errors.js'
import { parseJsonExact } from './json-exact.js'

/** The largest corpus read, in bytes: the messages are held in memory, prepared, for the run. */
export const MAX_CORPUS_BYTES = 256 * 1024 * 1024

const LINE_FILE = /\.(jsonl|ndjson)$/i

/**
 * @typedef {object} Corpus
 * @property {string} file the file or directory name, for reports
 * @property {'document'|'lines'|'directory'} kind
 * @property {Array<{value: object, where: string}>} messages in order; `where` is `line 12`, a file name, or the document
 */

/**
 * Reads a corpus.
 * @param {string} location a .json document, a .jsonl/.ndjson file, or a directory of .json files
 * @returns {Promise<Corpus>}
 * @throws {UsageError} one line: unreadable, too big, invalid JSON (with line and column), empty,
 *   a message that is not an object or array, or messages of both kinds
 */
export async function readCorpus (location) {
  const info = await stat(location).catch((err) => { throw new UsageError(`cannot read ${location}: ${err.code ?? err.message}`) })
  const name = path.basename(location)
  let kind
  let messages
  if (info.isDirectory()) {
    kind = 'directory'
    const files = (await readdir(location)).filter((file) => file.toLowerCase().endsWith('.json')).sort()
    if (files.length === 0) throw new UsageError(`${location} has no .json files`)
    let total = 0
    messages = []
    for (const file of files) {
      const full = path.join(location, file)
      total += (await stat(full)).size
      checkSize(location, total)
      messages.push({ value: parse(await readText(full), file), where: file })
    }
  } else if (LINE_FILE.test(location)) {
    kind = 'lines'
    checkSize(location, info.size)
    messages = []
    const lines = (await readText(location)).split('\n')
    for (let i = 0; i < lines.length; i++) {
      if (lines[i].trim() === '') continue
      messages.push({ value: parseLine(lines[i], i + 1, name), where: `line ${i + 1}` })
    }
  } else {
    kind = 'document'
    checkSize(location, info.size)
    messages = [{ value: parse(await readText(location), name), where: name }]
  }
  if (messages.length === 0) throw new UsageError(`${location} has no messages`)
  checkKinds(messages, kind === 'document' ? location : name, kind)
  return { file: name, kind, messages }
}

function checkSize (location, bytes) {
  if (bytes > MAX_CORPUS_BYTES) {
    throw new UsageError(`${location} is ${(bytes / 2 ** 20).toFixed(0)} MiB: a corpus may be at most ${MAX_CORPUS_BYTES / 2 ** 20} MiB (take a sample)`)
  }
}

/**
 * A text file as UTF-8, without the byte order mark editors write; one line if it cannot be read.
 * @param {string} file
 * @returns {Promise<string>}
 */
export async function readText (file) {
  try {
    return (await readFile(file, 'utf8')).replace(/^\uFEFF/, '') // editors write byte order marks
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${err.code ?? err.message}`)
  }
}

function parse (text, where) {
  try {
    return parseJsonExact(text)
  } catch (err) {
    throw new UsageError(`${where}: ${err.message}`)
  }
}

/** One JSON Lines message; its errors name the line of the file, not line 1 of the message. */
function parseLine (text, line, file) {
  try {
    return parseJsonExact(text)
  } catch (err) {
    throw new UsageError(`${file}: ${err.message.replace(/^invalid JSON at line 1,/, `invalid JSON at line ${line},`)}`)
  }
}

const kindOf = (value) => value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : `a ${typeof value}`

/** Every message an object, or every one an array: one schema's root is one or the other. */
function checkKinds (messages, file, corpusKind) {
  const first = kindOf(messages[0].value)
  for (const { value, where } of messages) {
    const kind = kindOf(value)
    const container = kind === 'an object' || kind === 'an array'
    if (!container && corpusKind === 'document') {
      throw new UsageError(`${file}: the payload must be a JSON object or array, not ${value === null ? 'null' : typeof value}`)
    }
    if (!container) throw new UsageError(`${file}, ${where}: a message must be a JSON object or array, not ${kind}`)
    if (kind !== first) throw new UsageError(`${file}, ${where} is ${kind} but ${messages[0].where} is ${first}: a corpus's messages must all be objects or all arrays`)
  }
}
