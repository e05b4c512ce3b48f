package wsbench;

import io.netty.channel.Channel;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/** What every connection shares: the options, the counters, the open WebSockets and the fan-out topics. */
final class Server {
  final Options options;
  final Path root;
  final Metrics metrics = new Metrics();
  final Fanout fanout;
  /** Open WebSockets, closed with 1001 when the server stops; added to by upgrade, before the handshake. */
  final ChannelGroup webSockets = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  /** Open connections and upgrades under way, against --max-connections. */
  final AtomicInteger active = new AtomicInteger();
  private boolean stopping; // guarded by this
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

  /**
   * Adds an upgrade's channel to the WebSockets, unless the server is stopping: then the upgrade
   * is refused, as the others may have been sent their close already.
   */
  synchronized boolean upgrading(Channel channel) {
    if (stopping) return false;
    webSockets.add(channel);
    return true;
  }

  /** Refuses upgrades from now on: once it returns, every WebSocket open or opening is in webSockets. */
  synchronized void stopUpgrades() {
    stopping = true;
  }
}
