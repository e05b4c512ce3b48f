import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from '../../lib/errors.js'
import { MAX_CORPUS_BYTES, readCorpus } from '../../lib/schema/corpus.js'
import { temporaryDirectory } from '../helpers.js'

const dir = temporaryDirectory('corpus')
const written = (name, text) => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, text)
  return file
}
const usage = (pattern) => (err) => err instanceof UsageError && pattern.test(err.message) && !err.message.includes('\n')

test('JSON Lines: one message per line, blank lines skipped, each named by its line; integers past 2^53 exact', async () => {
  const corpus = await readCorpus(written('feed.jsonl', '{"a":1}\n\n{"a":9007199254740993}\r\n{"b":"é"}\n'))
  assert.equal(corpus.file, 'feed.jsonl')
  assert.equal(corpus.kind, 'lines')
  assert.deepEqual(corpus.messages.map((m) => m.where), ['line 1', 'line 3', 'line 4'])
  assert.equal(corpus.messages[1].value.a, 9007199254740993n)
  assert.equal((await readCorpus(written('chat.ndjson', '[1]\n[2]'))).messages.length, 2, '.ndjson too, arrays too')
})

test('a directory: every .json file, in name order, named by its file; other files ignored', async () => {
  const folder = path.join(dir, 'messages')
  fs.mkdirSync(folder)
  fs.writeFileSync(path.join(folder, 'b.json'), '{"n":2}')
  fs.writeFileSync(path.join(folder, 'a.json'), '{"n":1}')
  fs.writeFileSync(path.join(folder, 'notes.txt'), 'not a message')
  const corpus = await readCorpus(folder)
  assert.equal(corpus.kind, 'directory')
  assert.deepEqual(corpus.messages.map((m) => [m.where, m.value.n]), [['a.json', 1], ['b.json', 2]])
})

test('one document: a corpus of one message', async () => {
  const corpus = await readCorpus(written('order.json', '\uFEFF{"id": 7}'))
  assert.deepEqual(corpus, { file: 'order.json', kind: 'document', messages: [{ value: { id: 7 }, where: 'order.json' }] })
})

test('bad input: one line each, naming the file, the line and the column', async () => {
  await assert.rejects(readCorpus(written('broken.jsonl', '{"a":1}\n{"a":\n')), usage(/^broken\.jsonl: invalid JSON at line 2, column 6: unexpected end of input$/))
  await assert.rejects(readCorpus(written('empty.jsonl', '\n\n')), usage(/empty\.jsonl has no messages$/))
  const none = path.join(dir, 'none')
  fs.mkdirSync(none)
  await assert.rejects(readCorpus(none), usage(/none has no \.json files$/))
  await assert.rejects(readCorpus(written('scalar.jsonl', '{"a":1}\n"text"\n')), usage(/^scalar\.jsonl, line 2: a message must be a JSON object or array, not a string$/))
  await assert.rejects(readCorpus(written('mixed.jsonl', '{"a":1}\n[1]\n')), usage(/^mixed\.jsonl, line 2 is an array but line 1 is an object: a corpus's messages must all be objects or all arrays$/))
  await assert.rejects(readCorpus(written('scalar.json', '42')), usage(/scalar\.json: the payload must be a JSON object or array, not number$/))
  await assert.rejects(readCorpus(path.join(dir, 'missing.jsonl')), usage(/^cannot read .*missing\.jsonl: ENOENT$/))
})

test('a corpus over the size cap is refused with its size, before it is read', async () => {
  const huge = path.join(dir, 'huge.jsonl')
  fs.closeSync(fs.openSync(huge, 'w'))
  fs.truncateSync(huge, MAX_CORPUS_BYTES + 1024 * 1024) // sparse: nothing is written
  await assert.rejects(readCorpus(huge), usage(/huge\.jsonl is 257 MiB: a corpus may be at most 256 MiB \(take a sample\)$/))
})
