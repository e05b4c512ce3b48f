package wsbench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import wsbench.json.BenchJson;
import wsbench.json.CountersJson;
import wsbench.json.PeopleJson;
import wsbench.json.PersonJson;

/** The built-in tests and the formats this server serves, found by the names the URL gives. */
final class Catalog {
  static final List<TestDef> TESTS = List.of(
      new TestDef(1, "numbers", bench.NumbersOuterClass.Numbers.getDefaultInstance(), BenchJson.Numbers.class, "numbers.jsonl.gz", "1-numbers.json"),
      new TestDef(2, "strings", bench.StringsOuterClass.Strings.getDefaultInstance(), BenchJson.Strings.class, "strings.jsonl.gz", "2-strings.json"),
      new TestDef(3, "medium", bench.MediumOuterClass.Medium.getDefaultInstance(), BenchJson.Medium.class, "medium.jsonl.gz", "3-medium.json"),
      new TestDef(4, "large", bench.LargeOuterClass.Large.getDefaultInstance(), BenchJson.Large.class, "large.jsonl.gz", "4-large.json"),
      new TestDef(5, "small", bench.SmallOuterClass.Small.getDefaultInstance(), BenchJson.Small.class, "small.jsonl.gz", "5-small.json"),
      new TestDef(0, "people", people.PeopleOuterClass.People.getDefaultInstance(), PeopleJson.People.class, null, null),
      new TestDef(0, "person", person.PersonOuterClass.Person.getDefaultInstance(), PersonJson.Person.class, "person.jsonl.gz", "person.json"),
      new TestDef(0, "counters", counters.CountersOuterClass.Counters.getDefaultInstance(), CountersJson.Counters.class, "counters.jsonl.gz", "counters.json"));

  /** The formats served: json through the --json-library chosen, and protobuf. */
  static final List<String> FORMATS = List.of("json", "protobuf");
  private static final Codec PROTOBUF = new ProtobufCodec();

  private Catalog() {}

  /** A test by number or name (trimmed, any case), as the Node server finds it (lib/payloads/catalog.js). */
  static TestDef test(String param) throws Refusal {
    String key = param.trim().toLowerCase(Locale.ROOT);
    var names = new ArrayList<String>();
    for (TestDef test : TESTS) {
      if (test.name().equals(key) || (test.id() != 0 && String.valueOf(test.id()).equals(key))) return test;
      names.add(test.id() != 0 ? test.id() + " " + test.name() : test.name());
    }
    throw new Refusal("unknown test '" + param + "': expected one of " + String.join(", ", names));
  }

  static Codec codec(String name, JsonLibrary json) throws Refusal {
    return switch (name) {
      case "json" -> json.codec;
      case "protobuf" -> PROTOBUF;
      default -> throw new Refusal("unknown format '" + name + "': expected one of " + String.join(", ", FORMATS));
    };
  }

  static String testNames() {
    return String.join(", ", TESTS.stream().map(TestDef::name).toList());
  }
}
