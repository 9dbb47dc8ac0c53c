package messages

import (
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/sse"
)

// The events a stream is mostly made of, written without reflection: the
// same bytes jsonx.Marshal writes of the event types in stream_encode.go,
// which write what these leave to them.

// quickStart writes a message_start event without reflection, the same
// bytes jsonx.Marshal writes (TestQuickEventsAreTheMarshalledEvents); ok
// is false for a message with content, or with kept members that
// jsonx.Members.Kept leaves to jsonx.Marshal, which then writes it. b is
// valid until the next quick event.
func (s *streamEncoder) quickStart(m *Response) (b []byte, ok bool) {
	if len(m.Content) > 0 {
		return nil, false
	}
	b = append(s.buf[:0], `{"type":"message_start","message":`...)
	if b, ok = appendMessage(b, m); !ok {
		return nil, false
	}
	b = append(b, '}')
	s.buf = b
	return b, true
}

// quickDelta writes a message_delta event as quickStart writes a
// message_start.
func (s *streamEncoder) quickDelta(e *messageDeltaEvent) (b []byte, ok bool) {
	b = append(s.buf[:0], `{"type":"message_delta","delta":{`...)
	var ms jsonx.Members
	if b, ok = ms.String(b, `"stop_reason":`, e.Delta.StopReason); !ok {
		return nil, false
	}
	if b, ok = appendNullable(ms.Name(b, `"stop_sequence":`), e.Delta.StopSequence); !ok {
		return nil, false
	}
	if b, ok = ms.Kept(b, e.Delta.Unknown); !ok {
		return nil, false
	}
	b = append(b, `},"usage":`...)
	if e.Usage == nil {
		b = append(b, "null"...)
	} else if b, ok = appendUsage(b, e.Usage); !ok {
		return nil, false
	}
	b = append(b, '}')
	s.buf = b
	return b, true
}

// appendUsage appends u as jsonx.Marshal writes it; ok is false for kept
// members that jsonx.Members.Kept leaves to jsonx.Marshal.
func appendUsage(b []byte, u *usage) (_ []byte, ok bool) {
	b = append(b, '{')
	var m jsonx.Members
	b = m.Int(b, `"input_tokens":`, u.InputTokens)
	b = m.Int(b, `"output_tokens":`, u.OutputTokens)
	b = m.Int(b, `"cache_creation_input_tokens":`, u.CacheCreationInputTokens)
	b = m.Int(b, `"cache_read_input_tokens":`, u.CacheReadInputTokens)
	if c := u.CacheCreation; c != nil {
		b = m.Name(b, `"cache_creation":{`)
		var cm jsonx.Members
		b = cm.Int(b, `"ephemeral_5m_input_tokens":`, c.Ephemeral5m)
		b = cm.Int(b, `"ephemeral_1h_input_tokens":`, c.Ephemeral1h)
		if b, ok = cm.Kept(b, c.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if t := u.ServerToolUse; t != nil {
		b = m.Name(b, `"server_tool_use":{`)
		var tm jsonx.Members
		b = tm.Int(b, `"web_search_requests":`, t.WebSearchRequests)
		if b, ok = tm.Kept(b, t.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if d := u.OutputTokensDetails; d != nil {
		b = m.Name(b, `"output_tokens_details":{`)
		var dm jsonx.Members
		b = dm.Int(b, `"thinking_tokens":`, d.ThinkingTokens)
		if b, ok = dm.Kept(b, d.Unknown); !ok {
			return b, false
		}
		b = append(b, '}')
	}
	if u.ServiceTier != "" {
		if b, ok = m.String(b, `"service_tier":`, u.ServiceTier); !ok {
			return b, false
		}
	}
	if b, ok = m.Kept(b, u.Unknown); !ok {
		return b, false
	}
	return append(b, '}'), true
}

// appendNullable appends v as a JSON string, or null for nil.
func appendNullable(b []byte, v *string) ([]byte, bool) {
	if v == nil {
		return append(b, "null"...), true
	}
	return jsonx.AppendQuote(b, *v)
}

// blockStart writes the content_block_start event of block k at index i,
// without reflection where appendBlock can (TestBlockEventsAreTheMarshalledEvents).
func (s *streamEncoder) blockStart(w *sse.Writer, i int, k *Block) error {
	b := strconv.AppendInt(append(s.buf[:0], `{"type":"content_block_start","index":`...), int64(i), 10)
	if b, ok := appendBlock(append(b, `,"content_block":`...), k); ok {
		err := w.Event("content_block_start", append(b, '}'))
		if s.buf = b; cap(b) > maxKeptBuf {
			// A large block (a search's results) is not kept for the
			// rest of the stream.
			s.buf = nil
		}
		return err
	}
	return s.write(w, "content_block_start", blockStartEvent{Type: "content_block_start", Index: i, ContentBlock: k})
}

// maxKeptBuf bounds the buffer kept for the next quick event.
const maxKeptBuf = 8 << 10

// blockStop writes the content_block_stop event of the block at index i.
func (s *streamEncoder) blockStop(w *sse.Writer, i int) error {
	b := strconv.AppendInt(append(s.buf[:0], `{"type":"content_block_stop","index":`...), int64(i), 10)
	s.buf = append(b, '}')
	return w.Event("content_block_stop", s.buf)
}

// deltaBytes is the event textDelta writes, in s.buf's room; ok is false
// when the text cannot be quoted as it is (invalid UTF-8), which
// jsonx.Marshal mends.
func (s *streamEncoder) deltaBytes(typ, field, text string) (b []byte, ok bool) {
	b = append(s.buf[:0], `{"type":"content_block_delta","index":`...)
	b = strconv.AppendInt(b, int64(s.openWire), 10)
	b = append(b, `,"delta":{"type":`...)
	b, err := jsontext.AppendQuote(b, typ)
	if err != nil {
		return nil, false
	}
	b = append(b[:len(b)-1], field...)
	if b, ok = jsonx.AppendQuote(b, text); !ok {
		return nil, false
	}
	return append(b, "}}"...), true
}
