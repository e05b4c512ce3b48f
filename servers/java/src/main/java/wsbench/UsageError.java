package wsbench;

/** A bad option or a port that cannot be had: one line on stderr and exit code 2 (docs/protocol.md). */
final class UsageError extends Exception {
  UsageError(String message) {
    super(message, null, false, false);
  }
}
