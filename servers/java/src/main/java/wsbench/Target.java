package wsbench;

import java.util.List;
import java.util.Map;

/** What an upgrade URL asks for (docs/protocol.md, "The upgrade URL"); from is -1 without &from=. */
record Target(TestDef test, Codec codec, Direction direction, boolean publisher, boolean repeated, long from) {
  enum Direction { UP, DOWN, ECHO, FANOUT }

  private static final String DIRECTIONS = "up, down, echo, fanout";

  /** The target of a query, or the 400's reason, in the order and words of the Go server; json binds with the library given. */
  static Target parse(Map<String, List<String>> query, JsonLibrary json) throws Refusal {
    String testParam = first(query, "test");
    String format = first(query, "format");
    if (testParam == null || testParam.isEmpty()) throw new Refusal("missing ?test= (one of " + Catalog.testNames() + ")");
    if (format == null || format.isEmpty()) throw new Refusal("missing &format= (one of json, protobuf)");
    Codec codec = Catalog.codec(format, json);
    String directionParam = query.containsKey("direction") ? first(query, "direction") : "up";
    Direction direction = switch (directionParam) {
      case "up" -> Direction.UP;
      case "down" -> Direction.DOWN;
      case "echo" -> Direction.ECHO;
      case "fanout" -> Direction.FANOUT;
      default -> throw new Refusal("unknown direction '" + directionParam + "': expected one of " + DIRECTIONS);
    };
    String payload = query.containsKey("payload") ? first(query, "payload") : "stream";
    if (!payload.equals("stream") && !payload.equals("repeated")) {
      throw new Refusal("unknown payload '" + payload + "': expected one of stream, repeated");
    }
    String role = first(query, "role");
    if (direction != Direction.FANOUT && role != null) {
      throw new Refusal("&role= goes with direction fanout, not " + directionParam);
    }
    if (role != null && !role.equals("subscriber") && !role.equals("publisher")) {
      throw new Refusal("unknown role '" + role + "': expected one of subscriber, publisher");
    }
    boolean publisher = "publisher".equals(role);
    long from = -1;
    String fromParam = first(query, "from");
    if (fromParam != null) {
      if (direction != Direction.FANOUT || publisher) throw new Refusal("&from= goes with a fan-out subscriber");
      if (!fromParam.matches("\\d{1,10}")) throw new Refusal("&from= must be a publish's sequence number, got '" + fromParam + "'");
      from = Long.parseLong(fromParam);
    }
    if (testParam.equals("custom")) {
      if (direction == Direction.DOWN) {
        throw new Refusal("direction down needs a built-in test: the server has no custom payload to send");
      }
      throw new Refusal("format '" + format + "' does not carry a payload of your own on the Java server: it decodes into a built-in test's generated types");
    }
    return new Target(Catalog.test(testParam), codec, direction, publisher, payload.equals("repeated"), from);
  }

  private static String first(Map<String, List<String>> query, String name) {
    List<String> values = query.get(name);
    return values == null || values.isEmpty() ? null : values.get(0);
  }

  boolean subscriber() {
    return direction == Direction.FANOUT && !publisher;
  }
}
