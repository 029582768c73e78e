package sessiond

import (
	"testing"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
)

func TestBuildersMakeTypedMessages(t *testing.T) {
	u := UserText("hello")
	if u.Id != "" || u.ParentId != nil {
		t.Fatalf("a builder set id %q / parent %v; both are left to the client and server", u.Id, u.ParentId)
	}
	if m := u.GetMessage(); m.Role != sessiondv1.Role_ROLE_USER || TextOf(m) != "hello" {
		t.Fatalf("UserText = %v", m)
	}

	call, err := NewToolCall("c1", "ls", map[string]interface{}{"path": "/tmp", "all": true})
	if err != nil {
		t.Fatal(err)
	}
	a := AssistantText("", call).GetMessage()
	if a.Role != sessiondv1.Role_ROLE_ASSISTANT || len(a.Content) != 1 || TextOf(a) != "" {
		t.Fatalf("AssistantText with a call and no text = %v", a)
	}
	calls := ToolCallsOf(a)
	if len(calls) != 1 || calls[0].Id != "c1" || calls[0].Name != "ls" ||
		calls[0].Arguments.GetStructValue().Fields["path"].GetStringValue() != "/tmp" {
		t.Fatalf("tool calls = %v", calls)
	}
	if b := AssistantText("thinking done", call).GetMessage(); TextOf(b) != "thinking done" || len(ToolCallsOf(b)) != 1 {
		t.Fatalf("AssistantText with text and a call = %v", b)
	}
	if e := AssistantText("").GetMessage(); len(e.Content) != 1 {
		t.Fatalf("AssistantText(\"\") has %d parts, want one (empty) text part", len(e.Content))
	}

	r := ToolResult("c1", "ls", "a b", true).GetMessage()
	if r.Role != sessiondv1.Role_ROLE_TOOL || r.GetToolCallId() != "c1" || r.GetToolName() != "ls" || !r.IsError || TextOf(r) != "a b" {
		t.Fatalf("ToolResult = %v", r)
	}
	if r := ToolResult("c2", "", "ok", false).GetMessage(); r.ToolName != nil || r.IsError {
		t.Fatalf("ToolResult without a name = %v", r)
	}

	if _, err := NewToolCall("c3", "x", make(chan int)); err == nil {
		t.Fatal("NewToolCall accepted arguments that are not JSON")
	}
}

func TestTextOfJoinsTextPartsOnly(t *testing.T) {
	m := &sessiondv1.Message{Content: []*sessiondv1.ContentPart{
		TextPart("one"),
		{Part: &sessiondv1.ContentPart_Thinking{Thinking: &sessiondv1.ThinkingPart{Thinking: "hidden"}}},
		TextPart("two"),
	}}
	if got := TextOf(m); got != "one\ntwo" {
		t.Fatalf("TextOf = %q, want %q", got, "one\ntwo")
	}
	if TextOf(nil) != "" {
		t.Fatal("TextOf(nil) is not empty")
	}
}
