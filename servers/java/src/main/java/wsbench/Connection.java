package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CorruptedWebSocketFrameException;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One upgraded connection: each message answered in order with exactly one frame (docs/protocol.md,
 * "Messages and replies"). Replies are written as messages are read and flushed once per read,
 * so a batch of messages in flight costs one write to the socket.
 */
final class Connection extends SimpleChannelInboundHandler<WebSocketFrame> {
  private static final ByteBuf ACK = Unpooled.unreleasableBuffer(Unpooled.copiedBuffer("ACK", StandardCharsets.US_ASCII));
  private static final String SUBSCRIBER_SENDS = "ERR a fan-out subscriber sends nothing; publish with &role=publisher";

  private final Server server;
  final Target target;
  private final Metrics.Labelled counters;
  /** down: the messages of the test in this format, and the next one's index in the stream. */
  private List<Object> stream;
  private Object one;
  private int next;

  Connection(Server server, Target target) {
    this.server = server;
    this.target = target;
    this.counters = server.metrics.of(target.codec(), target.test());
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    server.metrics.connections.inc();
    server.metrics.openConnections.inc();
    ctx.channel().closeFuture().addListener(closed -> {
      server.metrics.openConnections.dec();
      if (target.subscriber()) server.fanout.unsubscribe(this, ctx.channel());
    });
    if (target.subscriber()) server.fanout.subscribe(this, ctx.channel());
    if (target.direction() == Target.Direction.DOWN) prepareDown(ctx);
  }

  /** Reads the test's messages off the event loop, the connection's reading paused meanwhile. */
  private void prepareDown(ChannelHandlerContext ctx) {
    ctx.channel().config().setAutoRead(false);
    server.loader.execute(() -> {
      try {
        var prepared = target.test().prepare(target.codec(), server.root);
        ctx.executor().execute(() -> {
          stream = prepared.stream();
          one = prepared.one();
          ctx.channel().config().setAutoRead(true);
        });
      } catch (RuntimeException e) {
        String reason = e.getCause() != null ? e.getCause().toString() : e.toString();
        ctx.executor().execute(() -> {
          ctx.write(new TextWebSocketFrame(ErrorLine.of(target, "prepare", reason)));
          ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.INTERNAL_SERVER_ERROR.code(), "cannot prepare the test"))
              .addListener(ChannelFutureListener.CLOSE);
        });
      }
    });
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
    if (frame instanceof PingWebSocketFrame) {
      ctx.write(new PongWebSocketFrame(frame.content().retain()));
    } else if (frame instanceof CloseWebSocketFrame close) {
      ctx.writeAndFlush(new CloseWebSocketFrame(close.statusCode() < 0 ? 1000 : close.statusCode(), ""))
          .addListener(ChannelFutureListener.CLOSE);
    } else if (frame instanceof TextWebSocketFrame || frame instanceof BinaryWebSocketFrame) {
      onMessage(ctx, frame);
    }
  }

  private void onMessage(ChannelHandlerContext ctx, WebSocketFrame frame) {
    ByteBuf data = frame.content();
    switch (target.direction()) {
      case UP -> {
        long start = System.nanoTime();
        try {
          target.codec().decode(data, target.test());
          answered(start);
          ctx.write(new TextWebSocketFrame(ACK.duplicate()));
        } catch (IOException | RuntimeException e) {
          failed(ctx, "decode", e);
        }
      }
      case ECHO -> {
        long start = System.nanoTime();
        try {
          ByteBuf out = target.codec().encode(target.codec().decode(data, target.test()), ctx.alloc());
          answered(start);
          ctx.write(payloadFrame(out));
        } catch (IOException | RuntimeException e) {
          failed(ctx, "decode", e);
        }
      }
      case DOWN -> {
        Object message = target.repeated() ? one : stream.get(next);
        next = (next + 1) % stream.size();
        long start = System.nanoTime();
        try {
          ByteBuf out = target.codec().encode(message, ctx.alloc());
          answered(start);
          ctx.write(payloadFrame(out));
        } catch (IOException | RuntimeException e) {
          failed(ctx, "encode", e);
        }
      }
      case FANOUT -> {
        if (target.publisher()) {
          server.fanout.publish(this, ctx, frame);
        } else {
          ctx.write(new TextWebSocketFrame(SUBSCRIBER_SENDS));
        }
      }
    }
  }

  private void answered(long start) {
    counters.codecSeconds().inc((System.nanoTime() - start) / 1e9);
    counters.messages().inc();
  }

  /** Answers a message its codec failed on with the error line; the connection stays open. */
  void failed(ChannelHandlerContext ctx, String what, Exception e) {
    counters.decodeErrors().inc();
    ctx.write(new TextWebSocketFrame(ErrorLine.of(target, what, String.valueOf(e.getMessage()))));
  }

  Metrics.Labelled counters() {
    return counters;
  }

  WebSocketFrame payloadFrame(ByteBuf data) {
    return target.codec().binary() ? new BinaryWebSocketFrame(data) : new TextWebSocketFrame(data);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    ctx.flush();
  }

  /**
   * Nothing escapes a connection: a protocol violation was closed with its code by Netty's decoder
   * (1002, 1007, 1009) and is counted; a message over --max-payload in fragments closes with 1009;
   * anything else closes with 1011, in one line on stderr.
   */
  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    if (cause instanceof CorruptedWebSocketFrameException || cause instanceof CorruptedFrameException) {
      server.metrics.protocolErrors.inc();
      ctx.close();
    } else if (cause instanceof TooLongFrameException) {
      server.metrics.protocolErrors.inc();
      ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.MESSAGE_TOO_BIG)).addListener(ChannelFutureListener.CLOSE);
    } else if (cause instanceof IOException) {
      ctx.close(); // the peer went away
    } else {
      System.err.println("wsbench-server: connection " + target.codec().name() + " " + target.test().name() + " "
          + target.direction() + " failed: " + cause);
      ctx.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.INTERNAL_SERVER_ERROR, "internal error"))
          .addListener(ChannelFutureListener.CLOSE);
    }
  }
}
