package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Fan-out (docs/protocol.md, "Fan-out"): a topic per format and test; a publisher's frames go,
 * unchanged and uncopied, to every subscriber of its topic. A subscriber's unsent bytes are its
 * channel's outbound buffer, which Netty counts: past --max-buffered the subscriber is dropped.
 */
final class Fanout {
  static final int HEADER_BYTES = 24;
  private static final byte MEASURED = 'm';
  private static final byte WARMUP = 'w';
  private static final byte REPLAYED = 'r';
  private static final String END = "END ";
  private static final ByteBuf ACK = Unpooled.unreleasableBuffer(Unpooled.copiedBuffer("ACK", StandardCharsets.US_ASCII));

  /** A measured publish kept for replay: its sequence number and its frame, byte 0 already 'r'. */
  private record Kept(long seq, WebSocketFrame frame) {}

  private static final class Topic {
    final Set<Channel> subscribers = new LinkedHashSet<>();
    final ArrayDeque<Kept> kept = new ArrayDeque<>();
    WebSocketFrame end;
  }

  private final Server server;
  private final Map<String, Topic> topics = new ConcurrentHashMap<>();

  Fanout(Server server) {
    this.server = server;
  }

  private Topic topic(Target target) {
    return topics.computeIfAbsent(target.codec().name() + " " + target.test().name(), key -> new Topic());
  }

  /** Adds a subscriber, first sending it what it asked to have replayed and a kept END. */
  void subscribe(Connection connection, Channel channel) {
    int maxBuffered = server.options.maxBuffered();
    // Unwritable exactly past --max-buffered: both marks there.
    channel.config().setWriteBufferWaterMark(new WriteBufferWaterMark(maxBuffered, maxBuffered));
    server.metrics.fanoutSubscribers.inc();
    Target target = connection.target;
    Topic topic = topic(target);
    synchronized (topic) {
      if (target.from() >= 0) {
        long budget = maxBuffered;
        for (Kept kept : topic.kept) {
          if (kept.seq() < target.from()) continue;
          int size = kept.frame().content().readableBytes();
          if (size > budget) break;
          budget -= size;
          channel.write(kept.frame().retainedDuplicate());
          connection.counters().deliveries().inc();
          server.metrics.replayed.inc();
        }
      }
      if (topic.end != null) channel.write(topic.end.retainedDuplicate());
      channel.flush();
      topic.subscribers.add(channel);
    }
  }

  void unsubscribe(Connection connection, Channel channel) {
    Topic topic = topic(connection.target);
    synchronized (topic) {
      topic.subscribers.remove(channel);
    }
    server.metrics.fanoutSubscribers.dec();
  }

  /**
   * A publisher's frame: an END is delivered and kept, unanswered; a publish is decoded once,
   * delivered unchanged and answered ACK, or refused with an error line.
   */
  void publish(Connection connection, ChannelHandlerContext ctx, WebSocketFrame frame) {
    Target target = connection.target;
    Topic topic = topic(target);
    ByteBuf data = frame.content();
    if (frame instanceof TextWebSocketFrame && startsWithEnd(data)) {
      synchronized (topic) {
        if (topic.end != null) topic.end.release();
        topic.end = frame.copy();
        deliver(topic, topic.end, connection, false);
      }
      return;
    }
    long seq = sequence(data);
    if (seq < 0) {
      connection.failed(ctx, "decode", new IOException("a publish starts with the " + HEADER_BYTES + "-byte fan-out header"));
      return;
    }
    long start = System.nanoTime();
    try {
      target.codec().decode(data.slice(data.readerIndex() + HEADER_BYTES, data.readableBytes() - HEADER_BYTES), target.test());
    } catch (IOException | RuntimeException e) {
      connection.failed(ctx, "decode", e);
      return;
    }
    connection.counters().codecSeconds().inc((System.nanoTime() - start) / 1e9);
    connection.counters().messages().inc();
    byte kind = data.getByte(data.readerIndex());
    synchronized (topic) {
      if (topic.end != null) {
        topic.end.release();
        topic.end = null;
      }
      if (kind == WARMUP || (!topic.kept.isEmpty() && seq <= topic.kept.peekLast().seq())) forget(topic);
      if (kind == MEASURED && server.options.replay() > 0) {
        WebSocketFrame copy = frame.copy();
        copy.content().setByte(copy.content().readerIndex(), REPLAYED);
        topic.kept.addLast(new Kept(seq, copy));
        if (topic.kept.size() > server.options.replay()) topic.kept.removeFirst().frame().release();
      }
      deliver(topic, frame, connection, true);
    }
    ctx.write(new TextWebSocketFrame(ACK.duplicate()));
  }

  private static void forget(Topic topic) {
    for (Kept kept : topic.kept) kept.frame().release();
    topic.kept.clear();
  }

  /**
   * Sends a frame to every subscriber of the topic (its lock held), dropping those with more than
   * --max-buffered bytes unsent: their TCP connection is cut, without a close frame.
   */
  private void deliver(Topic topic, WebSocketFrame frame, Connection publisher, boolean count) {
    for (Iterator<Channel> it = topic.subscribers.iterator(); it.hasNext(); ) {
      Channel subscriber = it.next();
      if (!subscriber.isWritable()) {
        it.remove();
        server.metrics.slowDropped.inc();
        subscriber.close();
        continue;
      }
      subscriber.writeAndFlush(frame.retainedDuplicate());
      if (count) publisher.counters().deliveries().inc();
    }
  }

  private static boolean startsWithEnd(ByteBuf data) {
    if (data.readableBytes() < END.length()) return false;
    for (int i = 0; i < END.length(); i++) {
      if (data.getByte(data.readerIndex() + i) != END.charAt(i)) return false;
    }
    return true;
  }

  /** A publish's sequence number from its 24-byte header (kind m or w, then lowercase hex), or -1 without a valid one. */
  private static long sequence(ByteBuf data) {
    if (data.readableBytes() < HEADER_BYTES) return -1;
    int at = data.readerIndex();
    byte kind = data.getByte(at);
    if (kind != MEASURED && kind != WARMUP) return -1;
    long seq = 0;
    for (int i = 1; i < HEADER_BYTES; i++) {
      int digit = Character.digit(data.getByte(at + i), 16);
      if (digit < 0 || Character.isUpperCase(data.getByte(at + i))) return -1;
      if (i <= 8) seq = seq * 16 + digit;
    }
    return seq;
  }
}
