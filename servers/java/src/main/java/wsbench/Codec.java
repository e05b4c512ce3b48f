package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;

/** A wire format: how a frame's bytes become the test's message and back (docs/protocol.md, "Formats and frames"). */
interface Codec {
  /** The format's name in the URL and in /metrics. */
  String name();

  /** Whether its payloads go in binary frames (else text). */
  boolean binary();

  /** The message a frame's bytes hold; an exception says why they do not decode. */
  Object decode(ByteBuf data, TestDef test) throws IOException;

  /** The message's bytes, in a buffer of the allocator's. */
  ByteBuf encode(Object message, ByteBufAllocator allocator) throws IOException;

  /** A stream line (the test's message as JSON, lib/schema/adapter.js's mapping) as this format's message. */
  Object fromJsonLine(String line, TestDef test) throws IOException;
}
