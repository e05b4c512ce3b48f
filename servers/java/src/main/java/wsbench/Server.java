package wsbench;

import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** What every connection shares: the options, the counters, the open WebSockets and the fan-out topics. */
final class Server {
  final Options options;
  final Path root;
  final Metrics metrics = new Metrics();
  final Fanout fanout;
  /** Open WebSockets, closed with 1001 when the server stops. */
  final ChannelGroup webSockets = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  /** Open connections and upgrades under way, against --max-connections. */
  final AtomicInteger active = new AtomicInteger();
  final AtomicBoolean stopping = new AtomicBoolean();
  /** Reads and converts a `down` test's messages off the event loops. */
  final ExecutorService loader = Executors.newSingleThreadExecutor(runnable -> {
    Thread thread = new Thread(runnable, "wsbench-loader");
    thread.setDaemon(true);
    return thread;
  });

  Server(Options options, Path root) {
    this.options = options;
    this.root = root;
    this.fanout = new Fanout(this);
  }
}
