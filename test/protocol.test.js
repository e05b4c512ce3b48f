import { test, describe } from 'node:test'
import assert from 'node:assert/strict'
import {
  ACK, CLOSE_CODES, CUSTOM_TEST, DIRECTIONS, DOWN_REQUEST, ERROR_PREFIX, METRICS_PATH, PAYLOAD_KINDS, QUERY, REGISTRATION_OK, REGISTRATION_PREFIX,
  FANOUT_HEADER_BYTES, FANOUT_KIND, connectionUrl, fanoutHeader, isErrorReply, parseRegistration, readFanoutHeader, registrationFrame
} from '../lib/protocol.js'

describe('constants', () => {
  test('the wire vocabulary the server, clients and browser page agree on', () => {
    assert.deepEqual(QUERY, { test: 'test', format: 'format', direction: 'direction', role: 'role', payload: 'payload', token: 'token', from: 'from' })
    assert.deepEqual(PAYLOAD_KINDS, ['stream', 'repeated'])
    assert.deepEqual(DIRECTIONS, ['up', 'down', 'echo', 'fanout'])
    assert.equal(METRICS_PATH, '/metrics')
    assert.equal(ACK, 'ACK')
    assert.equal(DOWN_REQUEST, 'GET')
    assert.equal(ERROR_PREFIX, 'ERR ')
    assert.equal(CUSTOM_TEST, 'custom')
    assert.equal(REGISTRATION_PREFIX, 'SCHEMA ')
    assert.equal(REGISTRATION_OK, 'SCHEMA OK')
    assert.deepEqual(CLOSE_CODES, { shuttingDown: 1001, invalidUtf8: 1007, schemaRefused: 1008, tooBig: 1009, cannotPrepare: 1011 })
  })
  test('are frozen', () => {
    assert.ok(Object.isFrozen(QUERY))
    assert.ok(Object.isFrozen(DIRECTIONS))
    assert.ok(Object.isFrozen(CLOSE_CODES))
  })
  test('JSON text can never be mistaken for an error line: no JSON value starts with E', () => {
    assert.ok(!/^[\s{["\d\-tfn]/.test(ERROR_PREFIX))
  })
})

describe('connectionUrl', () => {
  test('puts the test and format in the query; up is the default and not written', () => {
    const url = connectionUrl('ws://127.0.0.1:7070', { test: '3', format: 'protobuf' })
    assert.ok(url instanceof URL)
    assert.equal(url.href, 'ws://127.0.0.1:7070/?test=3&format=protobuf')
    assert.equal(connectionUrl('ws://h:1', { test: 'small', format: 'json', direction: 'up' }).href, 'ws://h:1/?test=small&format=json')
  })
  test('adds a direction other than up', () => {
    assert.equal(connectionUrl('ws://h:1', { test: '4', format: 'json', direction: 'down' }).href, 'ws://h:1/?test=4&format=json&direction=down')
    assert.equal(connectionUrl('wss://h/bench', { test: '4', format: 'cbor', direction: 'echo' }).href, 'wss://h/bench?test=4&format=cbor&direction=echo')
  })
  test('keeps a query the server URL already has, replacing only its own parameters', () => {
    const url = connectionUrl('ws://h:1/?token=s3cret&test=1', { test: 'custom', format: 'msgpack' })
    assert.equal(url.searchParams.get('token'), 's3cret')
    assert.deepEqual(url.searchParams.getAll('test'), ['custom'])
    assert.equal(url.searchParams.get('format'), 'msgpack')
  })
  test('accepts a URL object and leaves it unchanged', () => {
    const server = new URL('ws://h:1')
    connectionUrl(server, { test: '1', format: 'json' })
    assert.equal(server.href, 'ws://h:1/')
  })
  test('a fan-out subscriber coming back says from which publish it wants what it missed', () => {
    assert.equal(connectionUrl('ws://h:1', { test: '3', format: 'json', direction: 'fanout', role: 'subscriber', from: 0 }).href,
      'ws://h:1/?test=3&format=json&direction=fanout&role=subscriber&from=0')
    assert.equal(connectionUrl('ws://h:1', { test: '3', format: 'json', direction: 'fanout', from: null }).search, '?test=3&format=json&direction=fanout')
  })

  test('encodes what it puts in the query', () => {
    assert.equal(connectionUrl('ws://h:1', { test: 'a b&c', format: 'json' }).search, '?test=a+b%26c&format=json')
  })
})

describe('fan-out header', () => {
  test('the same 24 ASCII bytes for every format: kind, sequence number, scheduled time; read back without allocating', () => {
    const header = { measured: false, replayed: false, seq: 0, publishedAtUs: 0 }
    const text = fanoutHeader(true, 0x1234, 1_700_000_000_123_456)
    assert.equal(text.length, FANOUT_HEADER_BYTES)
    assert.ok(readFanoutHeader(Buffer.from(`${text}{}`), header))
    assert.deepEqual(header, { measured: true, replayed: false, seq: 0x1234, publishedAtUs: 1_700_000_000_123_456 })
    assert.ok(readFanoutHeader(Buffer.from(fanoutHeader(false, 7, 5)), header))
    assert.deepEqual([header.measured, header.replayed, header.seq], [false, false, 7])
  })

  test('a replayed publish is measured, marked r by the server; anything else is not a header', () => {
    const header = {}
    const replayed = Buffer.from(fanoutHeader(true, 3, 9))
    replayed[0] = FANOUT_KIND.replayed
    assert.equal(replayed.toString('latin1', 0, 1), 'r')
    assert.ok(readFanoutHeader(replayed, header))
    assert.deepEqual([header.measured, header.replayed, header.seq, header.publishedAtUs], [true, true, 3, 9])
    assert.equal(readFanoutHeader(Buffer.from(`x${fanoutHeader(true, 3, 9).slice(1)}`), header), false, 'unknown kind')
    assert.equal(readFanoutHeader(Buffer.from(fanoutHeader(true, 3, 9).slice(0, 23)), header), false, 'too short')
    assert.equal(readFanoutHeader(Buffer.from(`m0000000g${'0'.repeat(15)}`), header), false, 'not hex')
  })
})

describe('isErrorReply', () => {
  test('text frames (the browser): ERR followed by a space', () => {
    assert.equal(isErrorReply('ERR decode failed'), true)
    assert.equal(isErrorReply('ERR '), true)
    assert.equal(isErrorReply('ERR'), false)
    assert.equal(isErrorReply('ERROR x'), false)
    assert.equal(isErrorReply('err x'), false)
    assert.equal(isErrorReply('ACK'), false)
    assert.equal(isErrorReply(''), false)
  })
  test('Buffers and Uint8Arrays (Node): the same four bytes, without decoding the frame', () => {
    assert.equal(isErrorReply(Buffer.from('ERR unknown test')), true)
    assert.equal(isErrorReply(new TextEncoder().encode('ERR ')), true)
    assert.equal(isErrorReply(Buffer.from('ERR')), false)
    assert.equal(isErrorReply(Buffer.from('ERRx')), false)
    assert.equal(isErrorReply(Buffer.from('ACK')), false)
    assert.equal(isErrorReply(Buffer.alloc(0)), false)
    assert.equal(isErrorReply(Buffer.from([0x0a, 0x45, 0x52, 0x52, 0x20])), false, 'only at the start')
  })
})

describe('registration frames', () => {
  const proto = 'syntax = "proto3";\npackage shop;\nmessage Order {\n  string id = 1;\n}\n'

  test('a frame is SCHEMA <type>, a newline, then the .proto text', () => {
    assert.equal(registrationFrame('shop.Order', proto), `SCHEMA shop.Order\n${proto}`)
  })
  test('round trip: the type name and the whole schema, newlines included', () => {
    assert.deepEqual(parseRegistration(registrationFrame('shop.Order', proto)), { typeName: 'shop.Order', protoText: proto })
    assert.deepEqual(parseRegistration(registrationFrame('pbjson.Payload', '')), { typeName: 'pbjson.Payload', protoText: '' })
  })
  test('the type name is trimmed (a CRLF line end, stray spaces)', () => {
    assert.deepEqual(parseRegistration('SCHEMA  shop.Order \r\nmessage Order {}'), { typeName: 'shop.Order', protoText: 'message Order {}' })
  })
  test('anything else is not a registration', () => {
    assert.equal(parseRegistration('SCHEMA shop.Order'), null, 'no newline, no schema')
    assert.equal(parseRegistration('{"id":"SCHEMA x\\n"}'), null)
    assert.equal(parseRegistration('schema shop.Order\nx'), null)
    assert.equal(parseRegistration('SCHEMA OK'), null, 'the server\'s answer is not a registration')
    assert.equal(parseRegistration(''), null)
  })
})
