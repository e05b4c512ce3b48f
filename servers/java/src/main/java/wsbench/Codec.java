package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;

/** A wire format: how a frame's bytes become the test's message and back (docs/protocol.md, "Formats and frames"). */
abstract class Codec {
  private final String name;
  private final boolean binary;

  /** name: the format's name in the URL and in /metrics; binary: whether its payloads go in binary frames (else text). */
  Codec(String name, boolean binary) {
    this.name = name;
    this.binary = binary;
  }

  final String name() {
    return name;
  }

  final boolean binary() {
    return binary;
  }

  /** The message a frame's bytes hold; an exception says why they do not decode. */
  abstract Object decode(ByteBuf data, TestDef test) throws IOException;

  /** The message's bytes, in a buffer of the allocator's. */
  abstract ByteBuf encode(Object message, ByteBufAllocator allocator) throws IOException;

  /** A stream line (the test's message as JSON, lib/schema/adapter.js's mapping) as this format's message. */
  abstract Object fromJsonLine(String line, TestDef test) throws IOException;
}
