package wsbench;

import com.google.protobuf.Message;
import com.google.protobuf.Parser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.zip.GZIPInputStream;

/**
 * A built-in test (docs/protocol.md, "The tests"): its protobuf and JSON types, and the messages a
 * `down` connection is sent, read from fixtures/ once per format on first use.
 */
final class TestDef {
  /** A test's messages in one format: the stream (people: its one message), and payload=repeated's one. */
  record Prepared(List<Object> stream, Object one) {}

  private final int id;
  private final String name;
  private final Message protobufDefault;
  private final Class<?> jsonClass;
  private final String streamFile;
  private final String repeatedFile;
  private final Map<String, Prepared> prepared = new ConcurrentHashMap<>();

  TestDef(int id, String name, Message protobufDefault, Class<?> jsonClass, String streamFile, String repeatedFile) {
    this.id = id;
    this.name = name;
    this.protobufDefault = protobufDefault;
    this.jsonClass = jsonClass;
    this.streamFile = streamFile;
    this.repeatedFile = repeatedFile;
  }

  int id() {
    return id;
  }

  String name() {
    return name;
  }

  Message protobufDefault() {
    return protobufDefault;
  }

  Parser<? extends Message> protobufParser() {
    return protobufDefault.getParserForType();
  }

  Class<?> jsonClass() {
    return jsonClass;
  }

  /** The test's messages in the codec's format, read and converted the first time (call it off the event loop). */
  Prepared prepare(Codec codec, Path root) {
    return prepared.computeIfAbsent(codec.name(), format -> {
      try {
        if (streamFile == null) {
          Object one = codec.fromJsonLine(People.json(People.COUNT), this);
          return new Prepared(List.of(one), one);
        }
        var stream = new ArrayList<Object>();
        Path file = root.resolve("fixtures").resolve("streams").resolve(streamFile);
        try (var reader = new BufferedReader(new InputStreamReader(new GZIPInputStream(Files.newInputStream(file)), StandardCharsets.UTF_8))) {
          for (String line = reader.readLine(); line != null; line = reader.readLine()) {
            if (!line.isEmpty()) stream.add(codec.fromJsonLine(line, this));
          }
        }
        if (stream.isEmpty()) throw new IOException(file + ": no messages");
        String one = Files.readString(root.resolve("data").resolve(repeatedFile));
        return new Prepared(List.copyOf(stream), codec.fromJsonLine(one, this));
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
  }
}
