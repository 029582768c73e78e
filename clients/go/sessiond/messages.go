package sessiond

import (
	"strings"

	"github.com/sessiond/sessiond/clients/go/sessiondv1"
	"google.golang.org/protobuf/types/known/structpb"
)

// Builders for the entries an agent appends most, so that callers do not
// spell out Entry{Kind: &Entry_Message{Message: &Message{Role: ..., Content:
// []*ContentPart{{Part: &ContentPart_Text{Text: ...}}}}}} by hand. They
// return plain generated messages with an empty id (filled before send) and
// no parent (attached to the current leaf): set either field yourself when
// you need to, and anything a builder does not cover is a field away.

// TextPart is a text content part.
func TextPart(text string) *sessiondv1.ContentPart {
	return &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_Text{Text: text}}
}

// NewToolCall is a tool call of an ASSISTANT message. args is any value
// structpb.NewValue accepts (nil, bool, numbers, string,
// map[string]interface{}, []interface{}, ...); it fails on anything else.
func NewToolCall(id, name string, args interface{}) (*sessiondv1.ToolCall, error) {
	v, err := structpb.NewValue(args)
	if err != nil {
		return nil, err
	}
	return &sessiondv1.ToolCall{Id: id, Name: name, Arguments: v}, nil
}

func messageEntry(m *sessiondv1.Message) *sessiondv1.Entry {
	return &sessiondv1.Entry{Kind: &sessiondv1.Entry_Message{Message: m}}
}

// UserText is a USER message with one text part.
func UserText(text string) *sessiondv1.Entry {
	return messageEntry(&sessiondv1.Message{
		Role:    sessiondv1.Role_ROLE_USER,
		Content: []*sessiondv1.ContentPart{TextPart(text)},
	})
}

// AssistantText is an ASSISTANT message: a text part (left out when text is
// empty), then the tool calls in order.
func AssistantText(text string, calls ...*sessiondv1.ToolCall) *sessiondv1.Entry {
	var parts []*sessiondv1.ContentPart
	if text != "" || len(calls) == 0 {
		parts = append(parts, TextPart(text))
	}
	for _, c := range calls {
		parts = append(parts, &sessiondv1.ContentPart{Part: &sessiondv1.ContentPart_ToolCall{ToolCall: c}})
	}
	return messageEntry(&sessiondv1.Message{Role: sessiondv1.Role_ROLE_ASSISTANT, Content: parts})
}

// ToolResult is a TOOL message answering the tool call toolCallID (which
// the server requires to be an unanswered call on the path) with text.
// toolName may be empty; isError marks a failed tool.
func ToolResult(toolCallID, toolName, text string, isError bool) *sessiondv1.Entry {
	m := &sessiondv1.Message{
		Role:       sessiondv1.Role_ROLE_TOOL,
		Content:    []*sessiondv1.ContentPart{TextPart(text)},
		ToolCallId: &toolCallID,
		IsError:    isError,
	}
	if toolName != "" {
		m.ToolName = &toolName
	}
	return messageEntry(m)
}

// TextOf is the text of a message: its text parts joined by newlines
// (thinking, images and tool calls left out). It takes a Message, so it
// reads state messages (StateMessage.GetMessage()) and entries
// (Entry.GetMessage()) alike; nil gives "".
func TextOf(m *sessiondv1.Message) string {
	var texts []string
	for _, p := range m.GetContent() {
		if t, ok := p.GetPart().(*sessiondv1.ContentPart_Text); ok {
			texts = append(texts, t.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// ToolCallsOf lists the tool calls of a message, in order.
func ToolCallsOf(m *sessiondv1.Message) []*sessiondv1.ToolCall {
	var calls []*sessiondv1.ToolCall
	for _, p := range m.GetContent() {
		if c := p.GetToolCall(); c != nil {
			calls = append(calls, c)
		}
	}
	return calls
}
