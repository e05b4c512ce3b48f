// Exact JSON: text <-> value without losing integers past 2^53 or -0, JSON paths for messages,
// and own-property assignment that keeps a `__proto__` key a key.
import { UsageError } from '../errors.js'

/** Deepest JSON nesting parseJsonExact and inferSchema accept: deeper input is refused, not a stack overflow. */
export const MAX_JSON_DEPTH = 1000

/** Space, line feed, carriage return, tab: the only whitespace JSON allows. */
const isJsonSpace = (code) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09

const NUMBER_RE = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/y

/**
 * Parses JSON text like JSON.parse, except that integer literals outside
 * ±Number.MAX_SAFE_INTEGER become BigInt, so digits past 2^53 are kept exactly. Every other
 * number is a JS number (`-0` stays -0); a `__proto__` key becomes an own property, as with
 * JSON.parse; for duplicate keys the last value wins.
 * @param {string} text JSON text
 * @returns {*} the value
 * @throws {UsageError} on invalid JSON, naming line and column, or nesting deeper than MAX_JSON_DEPTH
 */
export function parseJsonExact (text) {
  if (typeof text !== 'string') throw new TypeError('parseJsonExact expects a string')
  const reader = new ExactJsonReader(text)
  const value = reader.parseValue(1)
  reader.skipWhitespace()
  if (reader.pos < text.length) reader.fail(`unexpected ${quoteCharacter(text, reader.pos)} after the JSON value`)
  return value
}

/** One pass over JSON text: where it has got to, and a reader for each kind of value it meets there. */
class ExactJsonReader {
  constructor (text) {
    this.text = text
    this.pos = 0
  }

  fail (what) {
    const before = this.text.slice(0, this.pos)
    const line = before.split('\n').length
    const column = this.pos - before.lastIndexOf('\n')
    throw new UsageError(`invalid JSON at line ${line}, column ${column}: ${what}`)
  }

  unexpected () {
    this.fail(this.pos >= this.text.length ? 'unexpected end of input' : `unexpected character ${quoteCharacter(this.text, this.pos)}`)
  }

  skipWhitespace () {
    while (isJsonSpace(this.text.charCodeAt(this.pos))) this.pos++
  }

  expect (char) {
    this.skipWhitespace()
    if (this.text[this.pos] !== char) this.unexpected()
    this.pos++
  }

  parseLiteral (word, value) {
    if (!this.text.startsWith(word, this.pos)) this.unexpected()
    this.pos += word.length
    return value
  }

  parseString () {
    const start = this.pos++
    let escaped = false
    for (;;) {
      const c = this.text.charCodeAt(this.pos)
      if (c === 0x22) break
      if (Number.isNaN(c)) this.fail('unterminated string')
      if (c < 0x20) this.fail('control character in string')
      if (c === 0x5c) {
        escaped = true
        this.pos++
      }
      this.pos++
    }
    this.pos++
    if (!escaped) return this.text.slice(start + 1, this.pos - 1)
    try {
      return JSON.parse(this.text.slice(start, this.pos))
    } catch {
      this.pos = start
      return this.fail('invalid escape in string')
    }
  }

  parseNumber () {
    NUMBER_RE.lastIndex = this.pos
    const match = NUMBER_RE.exec(this.text)
    if (!match) this.unexpected()
    this.pos = NUMBER_RE.lastIndex
    const literal = match[0]
    const number = Number(literal)
    const isIntegerLiteral = match[1] === undefined && match[2] === undefined
    return isIntegerLiteral && !Number.isSafeInteger(number) ? BigInt(literal) : number
  }

  parseValue (depth) {
    if (depth > MAX_JSON_DEPTH) this.fail(`nesting deeper than ${MAX_JSON_DEPTH} levels`)
    this.skipWhitespace()
    switch (this.text[this.pos]) {
      case '{': return this.parseObject(depth)
      case '[': return this.parseArray(depth)
      case '"': return this.parseString()
      case 't': return this.parseLiteral('true', true)
      case 'f': return this.parseLiteral('false', false)
      case 'n': return this.parseLiteral('null', null)
      default: return this.parseNumber()
    }
  }

  parseObject (depth) {
    const object = {}
    this.pos++
    this.skipWhitespace()
    if (this.text[this.pos] === '}') {
      this.pos++
      return object
    }
    for (;;) {
      this.skipWhitespace()
      if (this.text[this.pos] !== '"') this.unexpected()
      const key = this.parseString()
      this.expect(':')
      setOwn(object, key, this.parseValue(depth + 1))
      this.skipWhitespace()
      if (this.text[this.pos] === '}') break
      if (this.text[this.pos] !== ',') this.unexpected()
      this.pos++
    }
    this.pos++
    return object
  }

  parseArray (depth) {
    const array = []
    this.pos++
    this.skipWhitespace()
    if (this.text[this.pos] === ']') {
      this.pos++
      return array
    }
    for (;;) {
      array.push(this.parseValue(depth + 1))
      this.skipWhitespace()
      if (this.text[this.pos] === ']') break
      if (this.text[this.pos] !== ',') this.unexpected()
      this.pos++
    }
    this.pos++
    return array
  }
}

/**
 * Serializes a value as compact JSON text, the inverse of parseJsonExact: BigInt as its digits,
 * -0 as `-0`.
 * @param {*} value a JSON value (null, boolean, finite number, BigInt, string, array, plain object)
 * @returns {string} JSON text
 * @throws {TypeError} for values JSON cannot express (undefined, NaN, functions, ...)
 */
export function stringifyJsonExact (value) {
  if (value === null) return 'null'
  switch (typeof value) {
    case 'bigint': return value.toString()
    case 'number':
      if (!Number.isFinite(value)) break
      return Object.is(value, -0) ? '-0' : String(value)
    case 'boolean':
    case 'string': return JSON.stringify(value)
    case 'object':
      if (Array.isArray(value)) return `[${value.map(stringifyJsonExact).join(',')}]`
      return `{${Object.keys(value).map((key) => `${JSON.stringify(key)}:${stringifyJsonExact(value[key])}`).join(',')}}`
  }
  throw new TypeError(`not a JSON value: ${String(value)}`)
}

/**
 * Formats a JSON path such as `$.features[3].properties["with-dash"]`.
 * @param {Array<string|number>} segments object keys (strings) and array indexes (numbers), outermost first
 * @returns {string} the path
 */
export function formatJsonPath (segments) {
  let path = '$'
  for (const segment of segments) {
    if (typeof segment === 'number') path += `[${segment}]`
    else path += /^[A-Za-z_$][\w$]*$/.test(segment) ? `.${segment}` : `[${JSON.stringify(segment)}]`
  }
  return path
}

/**
 * Sets an own enumerable property, including `__proto__`, which plain assignment would not.
 * @param {object} object target
 * @param {string} key property name
 * @param {*} value property value
 */
export function setOwn (object, key, value) {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

/**
 * A JSON path kept as a linked list ({parent, key}), so that walking a large document builds
 * strings only for the errors it reports.
 * @param {{parent: object|null, key: string|number}|null} path the parent's path (null: the root)
 * @param {string|number} key object key or array index
 * @returns {{parent: object|null, key: string|number}}
 */
export const childPath = (path, key) => ({ parent: path, key })

/**
 * The text of a linked JSON path, e.g. `$.items[2].name`.
 * @param {{parent: object|null, key: string|number}|null} path
 * @returns {string}
 */
export function linkedPathText (path) {
  const segments = []
  for (let at = path; at; at = at.parent) segments.push(at.key)
  return formatJsonPath(segments.reverse())
}

/**
 * The character at `pos` for an error line: quoted when printable, else its code point, so a binary
 * file (--payload /bin/ls) never writes a raw control byte to the terminal.
 */
function quoteCharacter (text, pos) {
  const code = text.codePointAt(pos)
  const printable = code > 0x20 && (code < 0x7f || code > 0x9f) && code !== 0xfffd
  if (printable) return JSON.stringify(String.fromCodePoint(code))
  return `U+${code.toString(16).toUpperCase().padStart(4, '0')} (not a JSON text file?)`
}
