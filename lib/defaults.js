// Defaults and limits that more than one command needs, kept in one leaf module so that parsing
// a command line (and --help) loads none of the modules that use them.

/** Where clients connect and the server listens unless told otherwise. */
export const DEFAULT_PORT = 7070
export const DEFAULT_URL = `ws://127.0.0.1:${DEFAULT_PORT}`

/**
 * Largest WebSocket message the server accepts, in bytes. The biggest built-in payload (`people`,
 * 50,000 persons) is ~12.9 MB of JSON; 64 MiB leaves room for users' own payloads while still
 * refusing absurd frames (ws closes the connection with 1009 above it).
 */
export const DEFAULT_MAX_PAYLOAD = 64 * 1024 * 1024

/** Open connections beyond which upgrades are refused with 503: bounds sockets and memory. */
export const DEFAULT_MAX_CONNECTIONS = 10_000

/**
 * A connection that has not finished its upgrade (or plain HTTP request) this long after it opened
 * is closed: idle and slowloris connections would otherwise hold a file each for Node's 60 s header
 * timeout plus its 30 s check interval, files that real upgrades need.
 */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000

/** Largest .proto text a schema may have, in UTF-8 bytes: servers compile schemas sent by clients. */
export const MAX_SCHEMA_BYTES = 1024 * 1024

/** Messages a client run sends when neither a count nor a duration is given. */
export const DEFAULT_CLIENT_MESSAGES = 10_000

/** The question the tool settles: compare's formats unless --formats says otherwise. Ratios are against the first. */
export const DEFAULT_FORMATS = Object.freeze(['json', 'protobuf'])

/** Compare runs generations while the next one fits in this much time from its start. */
export const DEFAULT_BUDGET_MS = 115_000

/** More generations than this (--trials) add run time, not certainty worth having. */
export const MAX_TRIALS = 50

/** A fan-out subscriber with more unsent bytes than this on the server is dropped (--max-buffered). */
export const DEFAULT_MAX_BUFFERED = 1024 * 1024

/**
 * A fan-out subscriber that has heard nothing for this long pings its server, and one that then
 * hears nothing for as long again is taken for gone and reconnects (--heartbeat): a link that is
 * cut stalls TCP silently for minutes.
 */
export const DEFAULT_HEARTBEAT_MS = 500

/** What a fan-out client runs (--role): both sides (the default), or one side, for runs split across hosts. */
export const FANOUT_ROLES = Object.freeze(['both', 'publisher', 'subscriber'])

/**
 * Which of a fan-out client's subscribers decode what they get (--decode): all of them (each pays
 * what a real subscriber pays, and the generator pays it once per subscriber) or one per process
 * (the rest read the header and account, so one process keeps up with thousands).
 */
export const FANOUT_DECODERS = Object.freeze(['all', 'one'])

/** Compare's publish rate with --direction fanout. */
export const DEFAULT_FANOUT_RATE = 20
