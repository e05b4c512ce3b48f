package wsbench;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.extensions.compression.WebSocketServerCompressionHandler;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.util.concurrent.TimeUnit;
import sun.misc.Signal;

/**
 * wsbench-server: a Java server keeping the wire protocol of docs/protocol.md, so that the
 * project's clients and compare run against a Java backend as they do against `node server.js`.
 */
public final class Main {
  /** Largest HTTP request (an upgrade, a GET /metrics): its line and headers. */
  private static final int MAX_REQUEST_BYTES = 64 * 1024;

  private Main() {}

  public static void main(String[] args) {
    try {
      Options options = Options.parse(args, System.getenv());
      if (options == null) {
        System.out.println(Options.help());
        return;
      }
      run(options);
    } catch (UsageError e) {
      System.err.println(e.getMessage());
      System.exit(2);
    } catch (Exception e) {
      System.err.println("wsbench-server: " + e);
      System.exit(1);
    }
  }

  private static void run(Options options) throws Exception {
    Path root = findRoot(options.root());
    Certificates.Served tls;
    try {
      tls = Certificates.of(options);
    } catch (GeneralSecurityException | IOException e) {
      // A file that reads but does not parse (or a key the JDK cannot use) is a bad option too.
      throw new UsageError("wsbench-server: cannot serve TLS with --tls-cert and --tls-key: " + e.getMessage());
    }
    var server = new Server(options, root);
    EventLoopGroup boss = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
    EventLoopGroup workers = new MultiThreadIoEventLoopGroup(Runtime.getRuntime().availableProcessors(), NioIoHandler.newFactory());
    var bootstrap = new ServerBootstrap()
        .group(boss, workers)
        .channel(NioServerSocketChannel.class)
        .option(ChannelOption.SO_BACKLOG, 1024)
        .childOption(ChannelOption.TCP_NODELAY, true)
        .childHandler(new ChannelInitializer<SocketChannel>() {
          @Override
          protected void initChannel(SocketChannel channel) {
            var pipeline = channel.pipeline();
            if (tls != null) {
              pipeline.addLast(new PlainHttpOnTls(), tls.context().newHandler(channel.alloc()));
            }
            pipeline.addLast(new HttpServerCodec(), new HttpObjectAggregator(MAX_REQUEST_BYTES));
            if (options.compress()) pipeline.addLast(new WebSocketServerCompressionHandler(0));
            pipeline.addLast(new HttpHandler(server));
          }
        });
    Channel listener;
    try {
      listener = bootstrap.bind(options.host(), options.port()).sync().channel();
    } catch (Exception e) {
      throw new UsageError("wsbench-server: cannot listen on " + options.host() + " port " + options.port() + ": " + e.getMessage());
    }
    var address = (InetSocketAddress) listener.localAddress();
    String host = address.getAddress().isAnyLocalAddress() ? options.host() : address.getAddress().getHostAddress();
    if (address.getAddress() instanceof Inet6Address && !address.getAddress().isAnyLocalAddress()) host = "[" + host + "]";
    if (tls != null && tls.file() != null) {
      System.out.println("throwaway certificate " + tls.file() + " (SHA-256 " + tls.fingerprint() + "): clients trust it with --ca "
          + tls.file() + ", or skip the check with --insecure");
    }
    long started = System.nanoTime();
    // Before the ready line: a starter may send SIGTERM as soon as it reads it.
    for (String name : new String[] {"TERM", "INT"}) {
      Signal.handle(new Signal(name), signal -> {
        stop(server, listener);
        if (tls != null) tls.remove();
        System.out.printf("stopped on SIG%s after %.0f s%n", name, (System.nanoTime() - started) / 1e9);
        System.out.flush();
        Runtime.getRuntime().halt(0);
      });
    }
    System.out.println("listening on " + (tls != null ? "wss" : "ws") + "://" + host + ":" + address.getPort() + " (java server, root " + root + ")");
    System.out.flush();
    listener.closeFuture().sync();
  }

  /** Stops listening, closes every WebSocket with 1001, and gives the peers 1 s to answer before cutting what is left. */
  private static void stop(Server server, Channel listener) {
    server.stopUpgrades();
    listener.close().awaitUninterruptibly();
    server.webSockets.writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "server shutting down"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
    while (!server.webSockets.isEmpty() && System.nanoTime() < deadline) {
      server.webSockets.newCloseFuture().awaitUninterruptibly(50);
    }
    server.webSockets.close().awaitUninterruptibly(1000);
  }

  /** The project's root (where fixtures/manifest.json is): --root, or the first directory holding it from the working directory or the jar upwards. */
  private static Path findRoot(String given) throws UsageError {
    if (!given.isEmpty()) return Path.of(given).toAbsolutePath();
    var starts = new java.util.ArrayList<Path>();
    starts.add(Path.of("").toAbsolutePath());
    try {
      starts.add(Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI()).getParent());
    } catch (Exception e) {
      // the working directory alone
    }
    for (Path start : starts) {
      for (Path dir = start; dir != null; dir = dir.getParent()) {
        if (Files.exists(dir.resolve("fixtures").resolve("manifest.json"))) return dir;
      }
    }
    throw new UsageError("wsbench-server: cannot find the project's fixtures/manifest.json above the working directory or the jar: pass --root");
  }
}
