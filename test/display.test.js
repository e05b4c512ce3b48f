import { test } from 'node:test'
import assert from 'node:assert/strict'
import { int, ms, perSecond, round, size, printable } from '../lib/display.js'

test('round: to a number of decimal places, half away from zero for positives', () => {
  assert.equal(round(1.23456, 2), 1.23)
  assert.equal(round(1.235, 1), 1.2)
  assert.equal(round(2.5, 0), 3)
  assert.equal(round(1234.5678, 3), 1234.568)
  assert.equal(round(0.1 + 0.2, 10), 0.3)
  assert.equal(round(1250, -2), 1300, 'negative digits round to tens, hundreds')
  assert.equal(typeof round(1, 2), 'number')
})

test('int: rounded, with thousands separators whatever the locale', () => {
  assert.equal(int(12850022), '12,850,022')
  assert.equal(int(999.5), '1,000')
  assert.equal(int(999.4), '999')
  assert.equal(int(0), '0')
  assert.equal(int(-1234), '-1,234')
})

test('perSecond: one decimal below 100, whole numbers with separators from 100', () => {
  assert.equal(perSecond(0), '0.0')
  assert.equal(perSecond(12.345), '12.3')
  assert.equal(perSecond(99.94), '99.9')
  assert.equal(perSecond(100), '100')
  assert.equal(perSecond(4321.6), '4,322')
})

test('ms: always three decimals (microsecond resolution)', () => {
  assert.equal(ms(0.1234), '0.123')
  assert.equal(ms(12), '12.000')
  assert.equal(ms(0), '0.000')
  assert.equal(ms(250.5), '250.500')
})

test('size: bytes below 1 KiB, KiB below 1 MiB, then MiB, one decimal', () => {
  assert.equal(size(0), '0 B')
  assert.equal(size(1023), '1023 B')
  assert.equal(size(1024), '1.0 KiB')
  assert.equal(size(1536), '1.5 KiB')
  assert.equal(size(1024 * 1024 - 1024), '1023.0 KiB')
  assert.equal(size(1024 * 1024), '1.0 MiB')
  assert.equal(size(12.9e6), '12.3 MiB')
})

test('printable: text as it came, cut when long; binary or garbled bytes as size and a hex prefix', () => {
  assert.equal(printable(Buffer.from('ERR json decode failed')), 'ERR json decode failed')
  assert.equal(printable(Buffer.from('ünïcode, tabs\tand all')), 'ünïcode, tabs\tand all')
  assert.equal(printable(Buffer.from('x'.repeat(400)), 10), 'xxxxxxxxxx...')
  assert.equal(printable(Buffer.from('two\nlines')), '9 bytes, not text: 74 77 6f 0a 6c 69 6e 65 73')
  assert.equal(printable(Uint8Array.from([0x0a, 0x03, 0xff])), '3 bytes, not text: 0a 03 ff')
  const long = printable(new Uint8Array(40))
  assert.equal(long, `40 bytes, not text: ${Array(16).fill('00').join(' ')} ...`)
})
