package wsbench;

import java.util.Arrays;

/**
 * --json-library: what the json format binds with, into the same generated classes and to the same
 * JSON on the wire, so that protobuf can be compared with each library a Java service might use.
 */
enum JsonLibrary {
  JACKSON("jackson", new JsonCodec()),
  GSON("gson", new GsonCodec(false)),
  /** Seed 002's own way: `new Gson()` in every call, so Gson reflects on the classes again each time. */
  GSON_PER_CALL("gson-per-call", new GsonCodec(true));

  /** Its name on the command line. */
  final String option;
  final Codec codec;

  JsonLibrary(String option, Codec codec) {
    this.option = option;
    this.codec = codec;
  }

  /** The choices, as --help and the refusal list them. */
  static String names() {
    return String.join(", ", Arrays.stream(values()).map(library -> library.option).toList());
  }

  static JsonLibrary of(String option) throws UsageError {
    for (JsonLibrary library : values()) {
      if (library.option.equals(option)) return library;
    }
    throw new UsageError("wsbench-server: --json-library must be one of " + names() + ", got '" + option + "'");
  }
}
