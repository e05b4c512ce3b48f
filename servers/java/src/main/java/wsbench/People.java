package wsbench;

/** The people test's one message, built by the rule in docs/protocol.md ("Fixtures"), as its JSON text. */
final class People {
  static final int COUNT = 50_000;

  private People() {}

  static String json(int count) {
    var out = new StringBuilder(count * 260).append("{\"person\":[");
    for (int i = 0; i < count; i++) {
      if (i > 0) out.append(',');
      out.append("{\"name\":\"Person Number ").append(i)
          .append("\",\"address\":[{\"street\":\"Street Number ").append(i).append("\",\"number\":").append(i)
          .append("},{\"street\":\"Street Number ").append(i).append("\",\"number\":").append(i)
          .append("}],\"mobile\":[\"111111").append(i).append("\",\"222222").append(i)
          .append("\"],\"email\":[\"emailperson").append(i).append("@somewhere.com\",\"otheremailperson").append(i)
          .append("@somewhere.com\"]}");
    }
    return out.append("]}").toString();
  }
}
