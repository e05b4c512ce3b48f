// pbjson (bin/pbjson.js): infer one lossless .proto for a JSON document or a corpus of messages,
// or check message by message that a .proto (or another format, given the .proto) carries them unchanged.

const EXIT_LOSSY = 1

/**
 * Runs pbjson.
 * @param {string[]} argv process.argv
 * @returns {Promise<number>} exit code: 0, or 1 when `check` finds a message the schema changes
 */
export async function runPbjsonCli (argv) {
  const { parsePbjsonArgs } = await import('./pbjson-options.js')
  const options = await parsePbjsonArgs(argv)
  const { readCorpus } = await import('../schema/corpus.js')
  const corpus = await readCorpus(options.json)
  return options.command === 'infer' ? infer(corpus, options) : check(corpus, options)
}

async function infer (corpus, options) {
  const { inferCorpusSchema, inferSchema } = await import('../schema/infer.js')
  const names = { typeName: options.type, packageName: options.package }
  if (corpus.kind === 'document') {
    process.stdout.write(inferSchema(corpus.messages[0].value, names).proto)
    return 0
  }
  const messages = corpus.messages.slice(0, options.sample ?? corpus.messages.length)
  const { proto, maps, unions } = inferCorpusSchema(messages, names)
  process.stdout.write(proto)
  const kinds = tagCounts(messages)
  process.stderr.write(`read ${messages.length} of ${corpus.messages.length} messages from ${corpus.file}` +
    `${kinds ? `; kinds by ${kinds.tag}: ${kinds.counts}` : ''}` +
    `; maps: ${maps.length ? maps.join(', ') : 'none'}; unions: ${unions.length ? unions.join(', ') : 'none'}\n`)
  return 0
}

/** --format's codec, told the corpus's messages and the schema's type as a user's payload. */
async function formatCodec ({ format, codecModules }, corpus, type) {
  const { addCodecModules, createCodec } = await import('../codecs/registry.js')
  await addCodecModules(codecModules)
  const messages = corpus.messages.map((message) => message.value)
  return createCodec(format, { name: 'custom', custom: true, file: corpus.file, messages, type, typeName: type.fullName.slice(1) })
}

/** The values of a tag every message carries (`type`, `event`, `kind`...), counted: the kinds of message. */
function tagCounts (messages) {
  for (const tag of ['type', 'event', 'kind', 'op', 'action', 'channel']) {
    const values = messages.map(({ value }) => value?.[tag])
    if (!values.every((value) => typeof value === 'string')) continue
    const counts = new Map()
    for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1)
    return { tag, counts: [...counts].map(([value, count]) => `${value} ${count}`).join(', ') }
  }
  return null
}

async function check (corpus, options) {
  const [{ readText }, { compileSchema }, fidelity] = await Promise.all([
    import('../schema/corpus.js'), import('../schema/compile.js'), import('../schema/fidelity.js')
  ])
  const type = compileSchema(await readText(options.proto), options.type, { filename: options.proto })
  const maxExamples = options.examples
  const codec = options.format && await formatCodec(options, corpus, type)
  const { checkFidelity, checkCodecFidelity, checkMessages, formatDifference } = fidelity
  const checkOne = codec
    ? (value) => checkCodecFidelity(codec, value, { maxExamples })
    : (value) => checkFidelity(type, value, { maxExamples })
  const { lossless, differences, messages, examples } = checkMessages(corpus.messages, checkOne, { maxExamples })
  if (lossless) {
    process.stdout.write('lossless\n')
    return 0
  }
  const of = corpus.messages.length > 1 ? ` in ${messages} of ${corpus.messages.length} messages` : ''
  const lines = examples.map((difference) => `  ${formatDifference(difference)}\n`).join('')
  process.stdout.write(`lossy: ${differences} difference${differences === 1 ? '' : 's'}${of}\n${lines}`)
  return EXIT_LOSSY
}
