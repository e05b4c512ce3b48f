package wsbench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The server's command line, as the Go and Node servers take it (docs/protocol.md, "Options"). */
record Options(
    String host,
    int port,
    String token,
    long maxPayload,
    int maxConnections,
    long handshakeTimeoutMs,
    boolean compress,
    int maxBuffered,
    int replay,
    String root,
    String tlsCert,
    String tlsKey,
    boolean tlsThrowaway,
    JsonLibrary jsonLibrary) {

  static final String USAGE = "usage: wsbench-server [--host H] [--port P] [--token T] [--max-payload B] [--max-connections N]"
      + " [--handshake-timeout 10s] [--compress] [--max-buffered B] [--replay N] [--root DIR] [--tls-cert F --tls-key F | --tls]"
      + " [--json-library " + JsonLibrary.names().replace(", ", "|") + "]";

  private static final List<String> BOOLEANS = List.of("compress", "tls", "help");
  private static final List<String> VALUED = List.of("host", "port", "token", "max-payload", "max-connections",
      "handshake-timeout", "max-schema-bytes", "max-buffered", "replay", "root", "tls-cert", "tls-key", "json-library");

  /** Parses the arguments; null for --help. */
  static Options parse(String[] args, Map<String, String> env) throws UsageError {
    var values = new java.util.HashMap<String, String>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("-") || arg.equals("-") || arg.equals("--")) {
        throw new UsageError("wsbench-server: unexpected argument '" + arg + "' (--help lists the options)");
      }
      String name = arg.replaceFirst("^--?", "");
      String value = null;
      int equals = name.indexOf('=');
      if (equals >= 0) {
        value = name.substring(equals + 1);
        name = name.substring(0, equals);
      }
      if (name.equals("p")) name = "port";
      if (BOOLEANS.contains(name)) {
        values.put(name, value == null ? "true" : value);
      } else if (VALUED.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.length) throw new UsageError("wsbench-server: --" + name + " needs a value (--help lists the options)");
          value = args[++i];
        }
        values.put(name, value);
      } else {
        throw new UsageError("wsbench-server: unknown option " + arg + " (--help lists the options)");
      }
    }
    if (values.containsKey("help")) return null;
    String tlsCert = values.getOrDefault("tls-cert", "");
    String tlsKey = values.getOrDefault("tls-key", "");
    boolean tls = flag(values, "tls");
    var options = new Options(
        values.getOrDefault("host", "127.0.0.1"),
        (int) whole(values, "port", env.getOrDefault("PORT", "7070"), 0, 65535),
        values.getOrDefault("token", env.getOrDefault("BENCH_TOKEN", "")),
        whole(values, "max-payload", String.valueOf(64L << 20), 1, Integer.MAX_VALUE),
        (int) whole(values, "max-connections", "10000", 1, Integer.MAX_VALUE),
        durationMs(values.getOrDefault("handshake-timeout", "10s")),
        flag(values, "compress"),
        (int) whole(values, "max-buffered", String.valueOf(1 << 20), 1, Integer.MAX_VALUE),
        (int) whole(values, "replay", "0", 0, 1_000_000),
        values.getOrDefault("root", ""),
        tlsCert,
        tlsKey,
        tls,
        JsonLibrary.of(values.getOrDefault("json-library", JsonLibrary.JACKSON.option)));
    whole(values, "max-schema-bytes", "1048576", 0, Long.MAX_VALUE); // taken and ignored: no schema registrations here
    if (tls && !(tlsCert.isEmpty() && tlsKey.isEmpty())) {
      throw new UsageError("--tls makes a throwaway certificate: give it, or --tls-cert and --tls-key, not both");
    }
    if (tlsCert.isEmpty() != tlsKey.isEmpty()) {
      throw new UsageError("--tls-cert and --tls-key go together: the certificate and its private key");
    }
    return options;
  }

  private static boolean flag(Map<String, String> values, String name) throws UsageError {
    String value = values.getOrDefault(name, "false");
    if (!value.equals("true") && !value.equals("false")) {
      throw new UsageError("wsbench-server: --" + name + " takes no value, got '" + value + "'");
    }
    return value.equals("true");
  }

  private static long whole(Map<String, String> values, String name, String fallback, long min, long max) throws UsageError {
    String text = values.getOrDefault(name, fallback);
    try {
      long value = Long.parseLong(text);
      if (value >= min && value <= max) return value;
    } catch (NumberFormatException e) {
      // said below, with the range
    }
    throw new UsageError("wsbench-server: --" + name + " must be a whole number from " + min + " to " + max + ", got '" + text + "'");
  }

  /** Go's durations (10s, 500ms, 1m, 1.5s) or a bare number of milliseconds. */
  static long durationMs(String text) throws UsageError {
    var match = java.util.regex.Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)?").matcher(text);
    if (match.matches()) {
      double amount = Double.parseDouble(match.group(1));
      String unit = match.group(2) == null ? "ms" : match.group(2);
      long ms = Math.round(amount * switch (unit) {
        case "s" -> 1000;
        case "m" -> 60_000;
        default -> 1;
      });
      if (ms > 0) return ms;
    }
    throw new UsageError("wsbench-server: --handshake-timeout must be a duration such as 10s or 500ms, got '" + text + "'");
  }

  /** The options, one a line, for --help. */
  static String help() {
    var lines = new ArrayList<String>();
    lines.add(USAGE);
    lines.add("  --host H                interface to listen on (127.0.0.1)");
    lines.add("  --port P, -p P          port to listen on; 0 takes any free one (7070, or PORT)");
    lines.add("  --token T               upgrades and /metrics must carry it (BENCH_TOKEN)");
    lines.add("  --max-payload B         largest message in bytes; larger closes with 1009 (67108864)");
    lines.add("  --max-connections N     open connections beyond which upgrades get 503 (10000)");
    lines.add("  --handshake-timeout D   408 and close a connection without a whole request by then (10s)");
    lines.add("  --compress              accept permessage-deflate");
    lines.add("  --max-buffered B        fan-out: drop a subscriber with more bytes than this unsent (1048576)");
    lines.add("  --replay N              fan-out: measured publishes each topic keeps for subscribers that come back (0)");
    lines.add("  --max-schema-bytes B    taken for compatibility: this server refuses every schema registration");
    lines.add("  --root DIR              the project's root, where fixtures/ and data/ are (default: found upwards)");
    lines.add("  --tls-cert F --tls-key F  serve wss:// with this certificate and key (PEM)");
    lines.add("  --tls                   serve wss:// with a throwaway self-signed certificate");
    lines.add("  --json-library L        what json binds with: " + JsonLibrary.names() + " (gson-per-call: a new Gson for each decode and encode) (jackson)");
    return String.join("\n", lines);
  }
}
