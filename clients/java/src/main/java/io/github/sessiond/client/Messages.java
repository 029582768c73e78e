package io.github.sessiond.client;

import com.google.protobuf.ListValue;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.Message;
import io.github.sessiond.v1.Role;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.ToolCall;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Builders for the entries an agent appends most, and readers for the text of
 * what comes back.
 *
 * <p>Spelled out, one user turn is {@code Entry.newBuilder().setMessage(
 * Message.newBuilder().setRole(Role.ROLE_USER).addContent(
 * ContentPart.newBuilder().setText("hi"))).build()}; {@code userMessage("hi")}
 * is the same entry. The builders return plain generated messages with an
 * empty id (chosen by the client before send) and no parent (attached to the
 * current leaf): {@code entry.toBuilder()} sets either, and anything a builder
 * does not cover is a field away.
 */
public final class Messages {
  private Messages() {}

  /** A text content part. */
  public static ContentPart textPart(String text) {
    return ContentPart.newBuilder().setText(text).build();
  }

  /** A USER message with one text part. */
  public static Entry userMessage(String text) {
    return entry(Message.newBuilder().setRole(Role.ROLE_USER).addContent(textPart(text)));
  }

  /**
   * An ASSISTANT message: a text part (left out when text is empty and there
   * are tool calls), then the tool calls in order.
   */
  public static Entry assistantMessage(String text, ToolCall... toolCalls) {
    Message.Builder m = Message.newBuilder().setRole(Role.ROLE_ASSISTANT);
    if (!text.isEmpty() || toolCalls.length == 0) {
      m.addContent(textPart(text));
    }
    for (ToolCall c : toolCalls) {
      m.addContent(ContentPart.newBuilder().setToolCall(c));
    }
    return entry(m);
  }

  /**
   * A tool call with the given id. {@code arguments} is any JSON-like value:
   * a Map with String keys (the usual), a List or array, String, Number,
   * Boolean, null inside those, or a protobuf {@link Value}; null alone gives
   * no arguments ({@code {}}), as in the Python client.
   */
  public static ToolCall toolCall(String id, String name, Object arguments) {
    Value args =
        arguments == null
            ? Value.newBuilder().setStructValue(Struct.getDefaultInstance()).build()
            : toValue(arguments);
    return ToolCall.newBuilder().setId(id).setName(name).setArguments(args).build();
  }

  /**
   * A tool call with a new random id ({@code call_<16 hex>}): the TOOL message
   * that answers it names that id ({@link #toolResult}).
   */
  public static ToolCall toolCall(String name, Object arguments) {
    return toolCall("call_" + Ids.newEntryId(), name, arguments);
  }

  /**
   * A TOOL message answering the tool call {@code toolCallId}, which the server
   * requires to be an unanswered call on the path.
   *
   * @param toolName the tool's name, or null / empty to leave it out
   * @param isError the tool failed
   */
  public static Entry toolResult(String toolCallId, String toolName, String text, boolean isError) {
    Message.Builder m =
        Message.newBuilder()
            .setRole(Role.ROLE_TOOL)
            .addContent(textPart(text))
            .setToolCallId(toolCallId)
            .setIsError(isError);
    if (toolName != null && !toolName.isEmpty()) {
      m.setToolName(toolName);
    }
    return entry(m);
  }

  /** A successful TOOL message answering {@code toolCallId} with {@code text}. */
  public static Entry toolResult(String toolCallId, String text) {
    return toolResult(toolCallId, null, text, false);
  }

  private static Entry entry(Message.Builder m) {
    return Entry.newBuilder().setMessage(m).build();
  }

  /** The text of a message: its text parts joined by newlines (thinking, images and tool calls left out). */
  public static String textOf(Message message) {
    return message.getContentList().stream()
        .filter(p -> p.getPartCase() == ContentPart.PartCase.TEXT)
        .map(ContentPart::getText)
        .collect(Collectors.joining("\n"));
  }

  /** The text of a state's message ({@code GetState}). */
  public static String textOf(StateMessage message) {
    return textOf(message.getMessage());
  }

  /** The text of an entry: its message's text, "" for entries of other kinds. */
  public static String textOf(Entry entry) {
    return entry.hasMessage() ? textOf(entry.getMessage()) : "";
  }

  /** The tool calls of a message, in order. */
  public static List<ToolCall> toolCallsOf(Message message) {
    List<ToolCall> calls = new ArrayList<>();
    for (ContentPart p : message.getContentList()) {
      if (p.getPartCase() == ContentPart.PartCase.TOOL_CALL) {
        calls.add(p.getToolCall());
      }
    }
    return calls;
  }

  /**
   * A protobuf {@link Value} of a JSON-like Java value (see {@link
   * #toolCall(String, String, Object)}); numbers become doubles, as in JSON.
   *
   * @throws IllegalArgumentException for anything else (the path to it named)
   */
  public static Value toValue(Object v) {
    return toValue(v, "arguments");
  }

  private static Value toValue(Object v, String path) {
    if (v == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (v instanceof Value value) {
      return value;
    }
    if (v instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (v instanceof Number n) {
      return Value.newBuilder().setNumberValue(n.doubleValue()).build();
    }
    if (v instanceof CharSequence s) {
      return Value.newBuilder().setStringValue(s.toString()).build();
    }
    if (v instanceof Struct s) {
      return Value.newBuilder().setStructValue(s).build();
    }
    if (v instanceof Map<?, ?> map) {
      Struct.Builder s = Struct.newBuilder();
      for (Map.Entry<?, ?> e : map.entrySet()) {
        if (!(e.getKey() instanceof String key)) {
          throw new IllegalArgumentException(path + ": map keys must be strings, got " + e.getKey());
        }
        s.putFields(key, toValue(e.getValue(), path + "." + key));
      }
      return Value.newBuilder().setStructValue(s).build();
    }
    if (v instanceof Iterable<?> list) {
      ListValue.Builder l = ListValue.newBuilder();
      int i = 0;
      for (Object o : list) {
        l.addValues(toValue(o, path + "[" + i++ + "]"));
      }
      return Value.newBuilder().setListValue(l).build();
    }
    if (v instanceof Object[] array) {
      return toValue(Arrays.asList(array), path);
    }
    throw new IllegalArgumentException(
        path + ": not a JSON value: " + v.getClass().getName());
  }
}
