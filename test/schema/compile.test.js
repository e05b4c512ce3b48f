import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { UsageError } from '../../lib/errors.js'
import { MAX_SCHEMA_BYTES } from '../../lib/defaults.js'
import { compileSchema } from '../../lib/schema/compile.js'

const readFixture = (name) => readFileSync(new URL(`../fixtures/infer/${name}`, import.meta.url), 'utf8')

describe('compileSchema', () => {
  const failures = [
    ['a syntax error', 'syntax = "proto3";\nmessage A { int32 x = ; }', 'A', /^bad\.proto: illegal id ';' \(line 2\)$/],
    ['an unknown field type', 'syntax = "proto3";\nmessage A { Missing x = 1; }', 'A', /^bad\.proto: no such Type or Enum 'Missing' in Type \.A$/],
    ['an import of another file', 'syntax = "proto3";\nimport "other.proto";\nmessage A {}', 'A', /^bad\.proto: cannot import "other\.proto"/],
    ['an unknown message type', 'syntax = "proto3";\npackage p;\nmessage A {}', 'B', /^bad\.proto: no message type "B" \(it has p\.A\)$/],
    ['an enum named as the type', 'syntax = "proto3";\nenum E { X = 0; }', 'E', /^bad\.proto: no message type "E"/],
    ['text over the size limit', `syntax = "proto3";\n// ${'x'.repeat(MAX_SCHEMA_BYTES)}\nmessage A {}`, 'A', /more than the 1048576 allowed$/],
    ['something that is not text', Buffer.from('message A {}'), 'A', /schema must be text/]
  ]
  for (const [what, text, typeName, message] of failures) {
    it(`turns ${what} into a one-line UsageError`, () => {
      assert.throws(() => compileSchema(text, typeName, { filename: 'bad.proto' }), (err) => {
        assert.ok(err instanceof UsageError, `${err.name}: ${err.message}`)
        assert.match(err.message, message)
        assert.doesNotMatch(err.message, /\n/)
        return true
      })
    })
  }

  it('finds a type by its simple name and provides the well-known types', () => {
    assert.equal(compileSchema(readFixture('user-order.proto'), 'Order').fullName, '.shop.Order')
  })

  it('keeps field names as declared (keepCase) and resolves well-known field types', () => {
    const type = compileSchema(readFixture('user-order.proto'), 'shop.Order')
    assert.ok(type.fields.order_id && !type.fields.orderId, 'not renamed to camelCase')
    assert.equal(type.fields.metadata.resolvedType.fullName, '.google.protobuf.Struct')
    assert.equal(type.fields.coupon.resolvedType.fullName, '.google.protobuf.StringValue')
  })

  it('resolves an import of descriptor.proto, which inferred schemas use to declare an option', () => {
    const proto = 'syntax = "proto3";\nimport "google/protobuf/descriptor.proto";\nextend google.protobuf.MessageOptions { bool marked = 50000; }\nmessage A { option (marked) = true; int32 x = 1; }'
    const type = compileSchema(proto, 'A')
    assert.equal(type.options['(marked)'], true)
  })

  it('names at most five known types, without google ones, when the type is missing or not named', () => {
    const proto = 'syntax = "proto3";\nimport "google/protobuf/struct.proto";\n' + 'ABCDEF'.split('').map((name) => `message ${name} { google.protobuf.Struct s = 1; }`).join('\n')
    assert.throws(() => compileSchema(proto, 'Z'), /^UsageError: schema\.proto: no message type "Z" \(it has A, B, C, D, E, \.\.\.\)$/)
    assert.throws(() => compileSchema(proto, ''), /no message type ""/)
    assert.throws(() => compileSchema('syntax = "proto3";', 'A'), /^UsageError: schema\.proto: no message type "A"$/)
  })

  it('compiles each call into a root of its own: one schema never sees another one\'s types', () => {
    const first = compileSchema('syntax = "proto3";\nmessage A { int32 x = 1; }', 'A')
    const second = compileSchema('syntax = "proto3";\nmessage A { string x = 1; }', 'A')
    assert.equal(first.fields.x.type, 'int32')
    assert.equal(second.fields.x.type, 'string')
    assert.throws(() => compileSchema('syntax = "proto3";\nmessage B { A a = 1; }', 'B'), /no such Type or Enum 'A'/)
  })
})
