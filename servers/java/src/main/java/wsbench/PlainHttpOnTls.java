package wsbench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandler;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * On a TLS port, answers a plain HTTP request (a ws:// client) with 400 and a line saying to use
 * wss://, never a 200 (docs/protocol.md, "TLS"); a TLS record passes on to the SslHandler.
 */
final class PlainHttpOnTls extends ByteToMessageDecoder {
  private static final String BODY = "this port speaks TLS: connect with wss:// (or https://)\n";
  private static final byte[] RESPONSE = ("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\n"
      + "Content-Length: " + BODY.length() + "\r\n\r\n" + BODY).getBytes(StandardCharsets.US_ASCII);

  @Override
  protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
    if (in.readableBytes() < 5) return; // a TLS record header
    if (SslHandler.isEncrypted(in, false)) {
      ctx.pipeline().remove(this);
      return;
    }
    in.skipBytes(in.readableBytes());
    ctx.writeAndFlush(Unpooled.wrappedBuffer(RESPONSE)).addListener(ChannelFutureListener.CLOSE);
  }
}
