package wsbench;

/** An error line: `ERR `, then one line whose reason is at most 200 characters (docs/protocol.md, "Error lines"). */
final class ErrorLine {
  private static final int MAX_REASON = 200;

  private ErrorLine() {}

  static String of(Target target, String what, String reason) {
    String oneLine = reason.replaceAll("\\s+", " ").trim();
    if (oneLine.length() > MAX_REASON) {
      int end = MAX_REASON;
      if (Character.isHighSurrogate(oneLine.charAt(end - 1))) end--;
      oneLine = oneLine.substring(0, end);
    }
    return "ERR " + target.codec().name() + " " + what + " failed for test " + target.test().name() + ": " + oneLine;
  }
}
