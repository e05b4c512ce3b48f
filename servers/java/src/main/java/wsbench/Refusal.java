package wsbench;

/** Why an upgrade URL is refused with 400: the reason is the response's body (docs/protocol.md, "Admission"). */
final class Refusal extends Exception {
  Refusal(String reason) {
    super(reason, null, false, false);
  }
}
