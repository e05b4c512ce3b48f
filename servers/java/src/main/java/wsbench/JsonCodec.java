package wsbench;

import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.CoercionAction;
import com.fasterxml.jackson.databind.cfg.CoercionInputShape;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.type.LogicalType;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.ByteBufOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * json: Jackson binding into the test's plain classes (wsbench.json, generated from proto/ by
 * gen-json-types.js), as a Java service takes JSON into its DTOs. Typed: a value of another JSON
 * kind than the field's (a number for a string) is refused, as Go's encoding/json refuses it;
 * unknown fields are skipped, as both Go's and Spring Boot's defaults do.
 */
final class JsonCodec extends Codec {
  private final ObjectMapper mapper = strictMapper();
  /** A reader per JSON class, made once: ObjectReader is immutable and thread-safe. */
  private final ClassValue<ObjectReader> readers = new ClassValue<>() {
    @Override
    protected ObjectReader computeValue(Class<?> type) {
      return mapper.readerFor(type);
    }
  };

  JsonCodec() {
    super("json", false);
  }

  private static ObjectMapper strictMapper() {
    ObjectMapper mapper = JsonMapper.builder()
        .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
        .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
        .build();
    for (var shape : new CoercionInputShape[] {CoercionInputShape.Integer, CoercionInputShape.Float, CoercionInputShape.Boolean}) {
      mapper.coercionConfigFor(LogicalType.Textual).setCoercion(shape, CoercionAction.Fail);
    }
    mapper.coercionConfigFor(LogicalType.Boolean).setCoercion(CoercionInputShape.Integer, CoercionAction.Fail);
    mapper.coercionConfigFor(LogicalType.Integer).setCoercion(CoercionInputShape.Float, CoercionAction.Fail);
    return mapper;
  }

  @Override
  Object decode(ByteBuf data, TestDef test) throws IOException {
    if (data.hasArray()) {
      return readers.get(test.jsonClass()).readValue(data.array(), data.arrayOffset() + data.readerIndex(), data.readableBytes());
    }
    try (InputStream in = new ByteBufInputStream(data.duplicate())) {
      return readers.get(test.jsonClass()).readValue(in);
    }
  }

  @Override
  ByteBuf encode(Object message, ByteBufAllocator allocator) throws IOException {
    ByteBuf out = allocator.buffer();
    try (OutputStream stream = new ByteBufOutputStream(out)) {
      mapper.writeValue(stream, message);
      return out;
    } catch (IOException | RuntimeException e) {
      out.release();
      throw e;
    }
  }

  @Override
  Object fromJsonLine(String line, TestDef test) throws IOException {
    return readers.get(test.jsonClass()).readValue(line);
  }
}
