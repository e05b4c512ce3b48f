package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.Utf8FrameValidator;
import io.netty.handler.codec.http.websocketx.WebSocketDecoderConfig;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.concurrent.TimeUnit;

/**
 * A connection's HTTP side: the 408 timer, GET /metrics, and each upgrade's admission (token,
 * --max-connections, the URL, stopping) before the WebSocket handshake hands it to a Connection.
 */
final class HttpHandler extends SimpleChannelInboundHandler<FullHttpRequest> {
  private static final String TOKEN_REASON = "missing or wrong token: send Authorization: Bearer <token> or ?token=<token>";
  private static final String NOT_FOUND = "this is the Java wsbench server: connect with a WebSocket to ws://HOST:PORT/?test=<test>&format=<format>"
      + " (docs/protocol.md); counters at /metrics";

  private final Server server;
  private ScheduledFuture<?> handshakeTimer;

  HttpHandler(Server server) {
    this.server = server;
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    // Idle and slowloris connections would otherwise hold a file each (docs/protocol.md, "408").
    handshakeTimer = ctx.executor().schedule(() -> {
      server.metrics.handshakeTimeouts.inc();
      var response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.REQUEST_TIMEOUT);
      response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE).setInt(HttpHeaderNames.CONTENT_LENGTH, 0);
      ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
    }, server.options.handshakeTimeoutMs(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void handlerRemoved(ChannelHandlerContext ctx) {
    handshakeTimer.cancel(false);
  }

  @Override
  protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) throws Exception {
    handshakeTimer.cancel(false);
    if (!request.decoderResult().isSuccess()) {
      refuse(ctx, HttpResponseStatus.BAD_REQUEST, "malformed HTTP request");
      return;
    }
    if ("websocket".equalsIgnoreCase(request.headers().get(HttpHeaderNames.UPGRADE))) {
      upgrade(ctx, request);
    } else if (new QueryStringDecoder(request.uri()).path().equals("/metrics")) {
      metrics(ctx, request);
    } else {
      refuse(ctx, HttpResponseStatus.NOT_FOUND, NOT_FOUND);
    }
  }

  private void metrics(ChannelHandlerContext ctx, FullHttpRequest request) throws Exception {
    if (!request.method().equals(HttpMethod.GET) && !request.method().equals(HttpMethod.HEAD)) {
      refuse(ctx, HttpResponseStatus.METHOD_NOT_ALLOWED, "/metrics answers GET and HEAD", HttpHeaderNames.ALLOW, "GET, HEAD");
      return;
    }
    if (!authorized(request)) {
      refuse(ctx, HttpResponseStatus.UNAUTHORIZED, TOKEN_REASON, HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
      return;
    }
    ByteBuf body = ctx.alloc().buffer();
    try (var out = new ByteBufOutputStream(body)) {
      server.metrics.write(out);
    }
    var response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK,
        request.method().equals(HttpMethod.HEAD) ? Unpooled.EMPTY_BUFFER : body);
    response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain; version=0.0.4; charset=utf-8")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, body.readableBytes());
    if (request.method().equals(HttpMethod.HEAD)) body.release();
    boolean keepAlive = HttpUtil.isKeepAlive(request);
    if (!keepAlive) response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
    var written = ctx.writeAndFlush(response);
    if (!keepAlive) written.addListener(ChannelFutureListener.CLOSE);
  }

  private void upgrade(ChannelHandlerContext ctx, FullHttpRequest request) {
    if (!authorized(request)) {
      server.metrics.unauthorized.inc();
      refuse(ctx, HttpResponseStatus.UNAUTHORIZED, TOKEN_REASON, HttpHeaderNames.WWW_AUTHENTICATE, "Bearer");
      return;
    }
    int open = server.active.incrementAndGet();
    if (open > server.options.maxConnections()) {
      server.active.decrementAndGet();
      server.metrics.refusedUpgrades.inc();
      refuse(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "connection limit reached (" + (open - 1) + " open)");
      return;
    }
    ctx.channel().closeFuture().addListener(closed -> server.active.decrementAndGet());
    Target target;
    try {
      target = Target.parse(new QueryStringDecoder(request.uri()).parameters(), server.options.jsonLibrary());
    } catch (Refusal refusal) {
      server.metrics.refusedUpgrades.inc();
      refuse(ctx, HttpResponseStatus.BAD_REQUEST, refusal.getMessage());
      return;
    }
    var config = WebSocketDecoderConfig.newBuilder()
        .maxFramePayloadLength((int) Math.min(server.options.maxPayload(), Integer.MAX_VALUE))
        .allowExtensions(server.options.compress())
        .closeOnProtocolViolation(true)
        .build();
    WebSocketServerHandshaker handshaker = new WebSocketServerHandshakerFactory(request.uri(), null, config).newHandshaker(request);
    if (handshaker == null) {
      WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(ctx.channel()).addListener(ChannelFutureListener.CLOSE);
      return;
    }
    if (!server.upgrading(ctx.channel())) {
      server.metrics.refusedUpgrades.inc();
      refuse(ctx, HttpResponseStatus.SERVICE_UNAVAILABLE, "server shutting down");
      return;
    }
    var pipeline = ctx.pipeline();
    // Text frames checked as they come (1007), then fragments joined up to --max-payload (1009).
    pipeline.addAfter(ctx.name(), "ws-utf8", new Utf8FrameValidator(true));
    pipeline.addAfter("ws-utf8", "ws-aggregator", new WebSocketFrameAggregator((int) Math.min(server.options.maxPayload(), Integer.MAX_VALUE)));
    pipeline.addAfter("ws-aggregator", "ws-connection", new Connection(server, target));
    pipeline.remove(this);
    handshaker.handshake(ctx.channel(), request).addListener(handshake -> {
      if (!handshake.isSuccess()) refuse(ctx, HttpResponseStatus.BAD_REQUEST, String.valueOf(handshake.cause().getMessage()));
    });
  }

  /** No token on the server, or the request carries it as a bearer token or ?token=, compared in constant time. */
  private boolean authorized(FullHttpRequest request) {
    String token = server.options.token();
    if (token.isEmpty()) return true;
    byte[] want = token.getBytes(StandardCharsets.UTF_8);
    String auth = request.headers().get(HttpHeaderNames.AUTHORIZATION, "").trim();
    int space = auth.indexOf(' ');
    if (space > 0 && auth.substring(0, space).equalsIgnoreCase("bearer")
        && MessageDigest.isEqual(auth.substring(space + 1).trim().getBytes(StandardCharsets.UTF_8), want)) {
      return true;
    }
    var given = new QueryStringDecoder(request.uri()).parameters().get("token");
    return given != null && !given.isEmpty() && MessageDigest.isEqual(given.get(0).getBytes(StandardCharsets.UTF_8), want);
  }

  /** A whole HTTP response, the reason and a newline as its body, then the connection closed. */
  static void refuse(ChannelHandlerContext ctx, HttpResponseStatus status, String reason, CharSequence... headers) {
    FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
        Unpooled.copiedBuffer(reason + "\n", StandardCharsets.UTF_8));
    for (int i = 0; i + 1 < headers.length; i += 2) response.headers().set(headers[i], headers[i + 1]);
    response.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE)
        .set(HttpHeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8")
        .setInt(HttpHeaderNames.CONTENT_LENGTH, response.content().readableBytes());
    ctx.channel().writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    ctx.close();
  }
}
