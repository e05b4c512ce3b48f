/**
 * An error caused by what the user asked for (bad option, unknown test, unreadable file).
 * Entry points print its message as one line and exit non-zero, without a stack trace.
 */
export class UsageError extends Error {
  /**
   * @param {string} message one line, saying what is wrong and, where it helps, what to do
   */
  constructor (message) {
    super(message)
    this.name = 'UsageError'
  }
}

/** Longest reason a refusal, an ERR reply or a one-line error carries. */
const MAX_LINE_LENGTH = 200

/**
 * An error as one line of at most MAX_LINE_LENGTH characters, for an HTTP refusal, an ERR reply
 * or a message that quotes it.
 * @param {unknown} err
 * @returns {string}
 */
export function oneLine (err) {
  const text = String(err?.message ?? err).replace(/\s+/g, ' ')
  return text.length > MAX_LINE_LENGTH ? `${text.slice(0, MAX_LINE_LENGTH)}...` : text
}

/**
 * Runs an async entry point and turns any failure into one line on stderr and a non-zero exit.
 * Unexpected errors keep their stack only when DEBUG is set, so users never see a trace by default.
 * @param {() => Promise<number|void>} main resolves to the exit code (default 0)
 */
export function runMain (main) {
  main().then(
    (code) => { process.exitCode = code ?? 0 },
    (err) => {
      const text = err instanceof UsageError ? err.message : `error: ${err?.message ?? err}`
      process.stderr.write(`${text}\n`)
      if (process.env.DEBUG && !(err instanceof UsageError)) process.stderr.write(`${err?.stack}\n`)
      process.exitCode = err instanceof UsageError ? 2 : 1
    }
  )
}
