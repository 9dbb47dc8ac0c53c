package chatcompletions

import (
	"strconv"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// appendResponse appends the whole reply w without reflection: the same
// bytes jsonx.Marshal writes (TestQuickResponseIsTheMarshalledResponse)
// for the replies most requests get: choices of text, reasoning, a
// refusal and tool calls, with their finish, and the usage. ok is false
// for anything else (content parts, logprobs, annotations, members kept
// from an upstream that Marshal might write otherwise), which
// jsonx.Marshal then writes.
func appendResponse(b []byte, w *Response) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	if b, ok = m.String(b, `"id":`, w.ID); !ok {
		return b, false
	}
	if b, ok = m.String(b, `"object":`, w.Object); !ok {
		return b, false
	}
	b = strconv.AppendInt(m.Name(b, `"created":`), w.Created, 10)
	if b, ok = m.String(b, `"model":`, w.Model); !ok {
		return b, false
	}
	b = m.Name(b, `"choices":[`)
	for i := range w.Choices {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendWholeChoice(b, &w.Choices[i]); !ok {
			return b, false
		}
	}
	b = append(b, ']')
	if w.Usage != nil {
		if b, ok = appendUsage(b, w.Usage); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`"service_tier":`, w.ServiceTier}, {`"system_fingerprint":`, w.SystemFingerprint}} {
		if f.v != nil {
			if b, ok = m.String(b, f.name, *f.v); !ok {
				return b, false
			}
		}
	}
	if b, ok = m.Kept(b, w.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendWholeChoice appends one choice of a whole reply as jsonx.Marshal
// writes it.
func appendWholeChoice(b []byte, c *choice) (_ []byte, ok bool) {
	msg := &c.Message
	if c.Logprobs != nil || len(c.Unknown) > 0 || len(msg.Annotations) > 0 {
		return b, false
	}
	b = strconv.AppendInt(append(b, `{"index":`...), c.Index, 10)
	b = append(b, `,"message":{`...)
	var m jsonx.Members
	if b, ok = m.String(b, `"role":`, msg.Role); !ok {
		return b, false
	}
	if ct := msg.Content; ct != nil {
		switch {
		case ct.Null:
			b = append(m.Name(b, `"content":`), "null"...)
		case ct.String:
			if b, ok = m.String(b, `"content":`, ct.Text); !ok {
				return b, false
			}
		default:
			return b, false
		}
	}
	if msg.Name != "" {
		if b, ok = m.String(b, `"name":`, msg.Name); !ok {
			return b, false
		}
	}
	if msg.ToolCalls != nil {
		b = m.Name(b, `"tool_calls":[`)
		for i := range msg.ToolCalls {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendWholeToolCall(b, &msg.ToolCalls[i]); !ok {
				return b, false
			}
		}
		b = append(b, ']')
	}
	if msg.ToolCallID != "" {
		if b, ok = m.String(b, `"tool_call_id":`, msg.ToolCallID); !ok {
			return b, false
		}
	}
	for _, f := range [...]struct {
		name string
		v    *string
	}{{`"refusal":`, msg.Refusal}, {`"reasoning_content":`, msg.ReasoningContent}} {
		if f.v != nil {
			if b, ok = m.String(b, f.name, *f.v); !ok {
				return b, false
			}
		}
	}
	if msg.Annotations != nil {
		b = append(m.Name(b, `"annotations":`), "[]"...)
	}
	if b, ok = m.Kept(b, msg.Unknown); !ok {
		return b, false
	}
	b = append(b, `},"finish_reason":`...)
	if c.FinishReason == nil {
		b = append(b, "null"...)
	} else if b, ok = jsonx.AppendQuote(b, *c.FinishReason); !ok {
		return b, false
	}
	return append(b, `,"logprobs":null}`...), true
}

// appendWholeToolCall appends one tool call of a whole reply as
// jsonx.Marshal writes it.
func appendWholeToolCall(b []byte, c *toolCall) (_ []byte, ok bool) {
	if len(c.Unknown) > 0 || len(c.Function.Unknown) > 0 {
		return b, false
	}
	if b, ok = jsonx.AppendQuote(append(b, `{"id":`...), c.ID); !ok {
		return b, false
	}
	if b, ok = jsonx.AppendQuote(append(b, `,"type":`...), c.Type); !ok {
		return b, false
	}
	if b, ok = jsonx.AppendQuote(append(b, `,"function":{"name":`...), c.Function.Name); !ok {
		return b, false
	}
	if b, ok = jsonx.AppendQuote(append(b, `,"arguments":`...), c.Function.Arguments); !ok {
		return b, false
	}
	return append(b, "}}"...), true
}
