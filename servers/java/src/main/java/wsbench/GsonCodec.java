package wsbench;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonSyntaxException;
import com.google.gson.Strictness;
import com.google.gson.TypeAdapter;
import com.google.gson.TypeAdapterFactory;
import com.google.gson.reflect.TypeToken;
import com.google.gson.stream.JsonReader;
import com.google.gson.stream.JsonToken;
import com.google.gson.stream.JsonWriter;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * json through Gson (--json-library gson), into the classes Jackson binds (wsbench.json) and to the
 * same JSON: no HTML escaping, nulls left out. Typed as JsonCodec's Jackson is, which Gson is not by
 * default: it would read `5` into a string, `"5"` into a number, an unknown enum name or an empty
 * frame as null. Only as far as it costs next to nothing per value: `1.0` still reads into an int.
 */
final class GsonCodec extends Codec {
  /** An enum's number: no fraction or exponent. */
  private static final Pattern INTEGER = Pattern.compile("-?\\d+");

  /** The one Gson every call shares, or null for a new one per call. */
  private final Gson shared;

  /** perCall: a new Gson for each decode and each encode, as seed 002 used it (GSON_PER_CALL). */
  GsonCodec(boolean perCall) {
    super("json", false);
    this.shared = perCall ? null : newGson();
  }

  private static Gson newGson() {
    return new GsonBuilder()
        .disableHtmlEscaping()
        .setStrictness(Strictness.STRICT)
        .registerTypeAdapterFactory(new StrictTypes())
        .create();
  }

  private Gson gson() {
    return shared != null ? shared : newGson();
  }

  @Override
  Object decode(ByteBuf data, TestDef test) throws IOException {
    return read(data.toString(StandardCharsets.UTF_8), test);
  }

  @Override
  ByteBuf encode(Object message, ByteBufAllocator allocator) {
    return ByteBufUtil.writeUtf8(allocator, gson().toJson(message));
  }

  @Override
  Object fromJsonLine(String line, TestDef test) throws IOException {
    return read(line, test);
  }

  /** Gson.fromJson but for an empty text, which it reads as null where Jackson refuses it; trailing tokens refused as both do. */
  private Object read(String text, TestDef test) throws IOException {
    Gson gson = gson();
    JsonReader reader = gson.newJsonReader(new StringReader(text));
    Object message = gson.getAdapter(test.jsonClass()).read(reader);
    if (reader.peek() != JsonToken.END_DOCUMENT) throw new JsonSyntaxException("more JSON after the message at " + reader.getPath());
    return message;
  }

  /**
   * Each scalar read from its own JSON kind alone (null aside), as JsonCodec's mapper reads them, and
   * an enum from a name it has or its number (Jackson and Go's protobuf types take both); each
   * written as Gson writes it.
   */
  private static final class StrictTypes implements TypeAdapterFactory {
    @Override
    public <T> TypeAdapter<T> create(Gson gson, TypeToken<T> type) {
      Class<? super T> raw = type.getRawType();
      JsonToken kind;
      if (raw == String.class || raw.isEnum()) {
        kind = JsonToken.STRING;
      } else if (raw == Boolean.class) {
        kind = JsonToken.BOOLEAN;
      } else if (Number.class.isAssignableFrom(raw)) {
        kind = JsonToken.NUMBER;
      } else {
        return null;
      }
      TypeAdapter<T> builtIn = gson.getDelegateAdapter(this, type);
      return new TypeAdapter<T>() {
        @Override
        public void write(JsonWriter out, T value) throws IOException {
          builtIn.write(out, value);
        }

        @Override
        public T read(JsonReader in) throws IOException {
          JsonToken token = in.peek();
          if (token == JsonToken.NULL) return builtIn.read(in);
          // Paths only in errors: getPath() builds a string, and every value would pay for it.
          if (raw.isEnum() && token == JsonToken.NUMBER) {
            long number = integer(in);
            Object[] values = raw.getEnumConstants();
            if (number < 0 || number >= values.length) throw new JsonSyntaxException("no " + raw.getSimpleName() + " numbered " + number + " at " + in.getPreviousPath());
            return castOf(values[(int) number]);
          }
          if (token != kind) throw new JsonSyntaxException("expected " + kind + " for " + raw.getSimpleName() + " but was " + token + " at " + in.getPath());
          T value = builtIn.read(in);
          // Gson's enum adapter reads a name it does not know as null.
          if (value == null) throw new JsonSyntaxException("not a name of " + raw.getSimpleName() + " at " + in.getPreviousPath());
          return value;
        }
      };
    }

    /** A whole number read as text: Gson's own reader would take 1.0 as 1 (as it does for an int field, JSON having one kind of number). */
    private static long integer(JsonReader in) throws IOException {
      String text = in.nextString();
      try {
        if (INTEGER.matcher(text).matches()) return Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new JsonSyntaxException("out of range: " + text + " at " + in.getPreviousPath(), e);
      }
      throw new JsonSyntaxException("not an integer: " + text + " at " + in.getPreviousPath());
    }

    @SuppressWarnings("unchecked")
    private static <T> T castOf(Object value) {
      return (T) value;
    }
  }
}
