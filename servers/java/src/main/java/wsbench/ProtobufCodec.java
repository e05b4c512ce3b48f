package wsbench;

import com.google.protobuf.CodedOutputStream;
import com.google.protobuf.Message;
import com.google.protobuf.util.JsonFormat;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;

/** protobuf: protobuf-java's generated classes, parsed from and written into Netty's buffers without a copy. */
final class ProtobufCodec extends Codec {
  private final JsonFormat.Parser jsonParser = JsonFormat.parser();

  ProtobufCodec() {
    super("protobuf", true);
  }

  @Override
  Object decode(ByteBuf data, TestDef test) throws IOException {
    return test.protobufParser().parseFrom(data.nioBuffer());
  }

  @Override
  ByteBuf encode(Object message, ByteBufAllocator allocator) throws IOException {
    var protobuf = (Message) message;
    int size = protobuf.getSerializedSize();
    ByteBuf out = allocator.buffer(size);
    try {
      var output = CodedOutputStream.newInstance(out.nioBuffer(out.writerIndex(), size));
      protobuf.writeTo(output);
      output.checkNoSpaceLeft();
      return out.writerIndex(out.writerIndex() + size);
    } catch (IOException | RuntimeException e) {
      out.release();
      throw e;
    }
  }

  @Override
  Object fromJsonLine(String line, TestDef test) throws IOException {
    Message.Builder builder = test.protobufDefault().newBuilderForType();
    jsonParser.merge(line, builder);
    return builder.build();
  }
}
