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
	if b, ok = jsonx.List(m.Name(b, `"choices":[`), w.Choices, appendWholeChoice); !ok {
		return b, false
	}
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
		if b, ok = jsonx.List(m.Name(b, `"tool_calls":[`), msg.ToolCalls, appendWholeToolCall); !ok {
			return b, false
		}
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
	return appendChoiceEnd(b, c.FinishReason)
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

// readResponse reads a whole reply into w as jsonx.Unmarshal would,
// without reflection, when its choices hold text, reasoning, a refusal
// and tool calls, with members Parley does not model kept as they are.
// Anything else (content parts, logprobs, annotations, a repeated member,
// a value of an unexpected kind) makes it return false with w zero, and
// the general way reads the reply (TestQuickReadIsTheUnmarshalledResponse,
// FuzzQuickResponse).
func readResponse(data []byte, w *Response) (ok bool) {
	cr := chunkReaders.Get().(*chunkReader)
	defer func() {
		// A reply may be large; the pool keeps none of it.
		cr.Release()
		chunkReaders.Put(cr)
	}()
	r := replyReader{&cr.Walker}
	r.Reset(data)
	*w = Response{}
	if err := r.Object(func(name []byte) error { return r.member(name, w) }); err != nil || !r.End() {
		*w = Response{}
		return false
	}
	return true
}

// replyReader reads a whole reply. Unlike a chunk's, what it reads
// outlives the Walker, so it copies every string and kept value.
type replyReader struct{ *jsonx.Walker }

func (r replyReader) member(name []byte, w *Response) error {
	var err error
	switch string(name) {
	case "id":
		w.ID, err = r.String()
	case "object":
		w.Object, err = r.Word("chat.completion")
	case "created":
		w.Created, err = r.Int()
	case "model":
		w.Model, err = r.String()
	case "choices":
		var isNull bool
		w.Choices = nil
		isNull, err = r.Array(func() error {
			w.Choices = append(w.Choices, choice{})
			c := &w.Choices[len(w.Choices)-1]
			return r.Object(func(name []byte) error { return r.choice(name, c) })
		})
		if !isNull && w.Choices == nil {
			w.Choices = []choice{}
		}
	case "usage":
		if r.Null() {
			w.Usage = nil
			return nil
		}
		w.Usage = &usage{}
		err = r.Object(func(name []byte) error { return r.usage(name, w.Usage) })
	case "service_tier":
		w.ServiceTier, err = r.WordPtr("default", "auto", "flex", "priority", "scale")
	case "system_fingerprint":
		w.SystemFingerprint, err = r.WordPtr()
	default:
		w.Unknown, err = r.Keep(w.Unknown, name)
	}
	return err
}

func (r replyReader) choice(name []byte, c *choice) error {
	var err error
	switch string(name) {
	case "index":
		c.Index, err = r.Int()
	case "message":
		if r.Null() {
			c.Message = message{}
			return nil
		}
		err = r.Object(func(name []byte) error { return r.message(name, &c.Message) })
	case "finish_reason":
		c.FinishReason, err = r.WordPtr("stop", "length", "tool_calls", "content_filter", "function_call")
	case "logprobs":
		if !r.Null() {
			return jsonx.ErrForm
		}
		c.Logprobs = nil
	default:
		c.Unknown, err = r.Keep(c.Unknown, name)
	}
	return err
}

func (r replyReader) message(name []byte, m *message) error {
	var err error
	switch string(name) {
	case "role":
		m.Role, err = r.Word("assistant")
	case "content":
		if r.Null() {
			m.Content = nil // as Unmarshal leaves a pointer
			return nil
		}
		if r.Kind() != '"' {
			return jsonx.ErrForm // parts: the general way reads them
		}
		var s string
		if s, err = r.String(); err == nil {
			m.Content = &Content{String: true, Text: s}
		}
	case "name":
		m.Name, err = r.String()
	case "tool_call_id":
		m.ToolCallID, err = r.String()
	case "refusal":
		m.Refusal, err = r.WordPtr()
	case "reasoning_content":
		m.ReasoningContent, err = r.WordPtr()
	case "tool_calls":
		var isNull bool
		m.ToolCalls = nil
		isNull, err = r.Array(func() error {
			m.ToolCalls = append(m.ToolCalls, toolCall{})
			tc := &m.ToolCalls[len(m.ToolCalls)-1]
			return r.Object(func(name []byte) error { return r.toolCall(name, tc) })
		})
		if !isNull && m.ToolCalls == nil {
			m.ToolCalls = []toolCall{}
		}
	case "annotations":
		var isNull bool
		m.Annotations = nil
		isNull, err = r.Array(func() error { return jsonx.ErrForm })
		if !isNull {
			m.Annotations = []annotation{}
		}
	case "function_call", "audio":
		return jsonx.ErrForm // modelled elsewhere or rare: the general way
	default:
		m.Unknown, err = r.Keep(m.Unknown, name)
	}
	return err
}

func (r replyReader) toolCall(name []byte, tc *toolCall) error {
	var err error
	switch string(name) {
	case "id":
		tc.ID, err = r.String()
	case "type":
		tc.Type, err = r.Word("function")
	case "function":
		if r.Null() {
			tc.Function = function{}
			return nil
		}
		fn := &tc.Function
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "name":
				fn.Name, err = r.String()
			case "arguments":
				fn.Arguments, err = r.String()
			default:
				fn.Unknown, err = r.Keep(fn.Unknown, name)
			}
			return err
		})
	default:
		tc.Unknown, err = r.Keep(tc.Unknown, name)
	}
	return err
}

func (r replyReader) usage(name []byte, u *usage) error {
	var err error
	switch string(name) {
	case "prompt_tokens":
		u.PromptTokens, err = r.Int()
	case "completion_tokens":
		u.CompletionTokens, err = r.Int()
	case "total_tokens":
		u.TotalTokens, err = r.Int()
	case "prompt_tokens_details":
		if r.Null() {
			u.PromptTokensDetails = nil
			return nil
		}
		p := &promptDetails{}
		u.PromptTokensDetails = p
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "cached_tokens":
				p.CachedTokens, err = r.IntPtr()
			case "audio_tokens":
				p.AudioTokens, err = r.IntPtr()
			default:
				p.Unknown, err = r.Keep(p.Unknown, name)
			}
			return err
		})
	case "completion_tokens_details":
		if r.Null() {
			u.CompletionTokensDetails = nil
			return nil
		}
		o := &outputDetails{}
		u.CompletionTokensDetails = o
		err = r.Object(func(name []byte) error {
			var err error
			switch string(name) {
			case "reasoning_tokens":
				o.ReasoningTokens, err = r.IntPtr()
			case "audio_tokens":
				o.AudioTokens, err = r.IntPtr()
			case "accepted_prediction_tokens":
				o.AcceptedPredictionTokens, err = r.IntPtr()
			case "rejected_prediction_tokens":
				o.RejectedPredictionTokens, err = r.IntPtr()
			default:
				o.Unknown, err = r.Keep(o.Unknown, name)
			}
			return err
		})
	default:
		u.Unknown, err = r.Keep(u.Unknown, name)
	}
	return err
}
