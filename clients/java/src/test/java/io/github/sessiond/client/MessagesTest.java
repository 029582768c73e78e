package io.github.sessiond.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Value;
import io.github.sessiond.v1.ContentPart;
import io.github.sessiond.v1.Entry;
import io.github.sessiond.v1.Message;
import io.github.sessiond.v1.Role;
import io.github.sessiond.v1.StateMessage;
import io.github.sessiond.v1.ThinkingPart;
import io.github.sessiond.v1.ToolCall;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class MessagesTest {
  @Test
  void buildersMakeTypedMessages() {
    Entry u = Messages.userMessage("37*19=?");
    assertEquals("", u.getId(), "ids are chosen at send time");
    assertFalse(u.hasParentId());
    assertEquals(Role.ROLE_USER, u.getMessage().getRole());
    assertEquals("37*19=?", u.getMessage().getContent(0).getText());

    ToolCall call = Messages.toolCall("calc", Map.of("expr", "37*19", "exact", true));
    assertTrue(call.getId().matches("call_[0-9a-f]{16}"), call.getId());
    assertEquals("37*19", call.getArguments().getStructValue().getFieldsOrThrow("expr").getStringValue());
    Entry a = Messages.assistantMessage("", call);
    assertEquals(Role.ROLE_ASSISTANT, a.getMessage().getRole());
    assertEquals(1, a.getMessage().getContentCount(), "no empty text part before the call");
    assertEquals(List.of(call), Messages.toolCallsOf(a.getMessage()));
    assertEquals("", Messages.assistantMessage("").getMessage().getContent(0).getText());

    Entry t = Messages.toolResult(call.getId(), "calc", "703", true);
    assertEquals(Role.ROLE_TOOL, t.getMessage().getRole());
    assertEquals(call.getId(), t.getMessage().getToolCallId());
    assertEquals("calc", t.getMessage().getToolName());
    assertTrue(t.getMessage().getIsError());
    assertFalse(Messages.toolResult("c1", "ok").getMessage().hasToolName());
    assertEquals(
        Value.KindCase.STRUCT_VALUE,
        Messages.toolCall("c2", "noargs", null).getArguments().getKindCase(),
        "no arguments: {}");
  }

  @Test
  void textOfJoinsTextPartsOnly() {
    Message m =
        Message.newBuilder()
            .setRole(Role.ROLE_ASSISTANT)
            .addContent(ContentPart.newBuilder().setThinking(ThinkingPart.newBuilder().setThinking("hmm")))
            .addContent(Messages.textPart("one"))
            .addContent(ContentPart.newBuilder().setToolCall(Messages.toolCall("c", "f", null)))
            .addContent(Messages.textPart("two"))
            .build();
    assertEquals("one\ntwo", Messages.textOf(m));
    assertEquals("one\ntwo", Messages.textOf(StateMessage.newBuilder().setMessage(m).build()));
    assertEquals("one\ntwo", Messages.textOf(Entry.newBuilder().setMessage(m).build()));
    assertEquals("", Messages.textOf(Entry.getDefaultInstance()));
  }

  @Test
  void toValueTakesJsonLikeValues() {
    Value v = Messages.toValue(Map.of("list", Arrays.asList(1, "x", null, false), "n", 2.5));
    assertEquals(4, v.getStructValue().getFieldsOrThrow("list").getListValue().getValuesCount());
    assertEquals(2.5, v.getStructValue().getFieldsOrThrow("n").getNumberValue());
    assertEquals(Value.KindCase.NULL_VALUE, Messages.toValue(new Object[] {null}).getListValue().getValues(0).getKindCase());
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> Messages.toValue(Map.of("k", new Object())));
    assertTrue(e.getMessage().startsWith("arguments.k:"), e.getMessage());
  }
}
