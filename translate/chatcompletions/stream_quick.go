package chatcompletions

import (
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// chunkReader reads a streamed chunk without reflection when it holds only
// what most chunks hold: the header members, choices of text, reasoning,
// refusal and tool-call steps, a finish reason, usage. Services differ in
// the order and the extras of their chunks (an obfuscation string, a
// native finish reason, content-filter results), so it reads members by
// name, in any order, and passes over the ones the stream decoder does
// not read, as the reflective decoder keeps them aside unread.
//
// Anything else (annotations, logprobs, an error, a repeated member, a
// value of an unexpected kind, a name spelled with escapes) makes read
// return false, and the chunk is decoded by jsonx.Unmarshal instead, which
// is the reference: FuzzQuickChunk holds read to the same chunk.
//
// The chunk read points into the reader's own storage and is valid until
// the next read.
type chunkReader struct {
	jsonx.Walker
	w       chunk
	choices [1]chunkChoice
	calls   [1]deltaToolCall
	fns     [1]deltaFunction
}

// chunkReaders are shared by every stream: a reader is held only while
// one chunk is decoded, so a stream that waits holds none.
var chunkReaders = sync.Pool{New: func() any { return new(chunkReader) }}

// jsonNull is the raw value the reflective decoder keeps for a null error.
var jsonNull = jsontext.Value("null")

// read reads data into the reader's chunk, which it returns; head asks
// for the header members (id, model...), which the stream decoder reads
// from its first chunk only. When ok is false the chunk is zero, ready for
// the reflective decoder.
func (r *chunkReader) read(data []byte, head bool) (w *chunk, ok bool) {
	r.Reset(data)
	w = &r.w
	*w = chunk{}
	if err := r.Object(func(name []byte) error { return r.chunkMember(name, w, head) }); err == nil && r.End() {
		return w, true
	}
	*w = chunk{}
	return w, false
}

func (r *chunkReader) chunkMember(name []byte, w *chunk, head bool) error {
	var err error
	switch string(name) {
	case "id", "object", "model":
		if !head {
			return r.SkipString()
		}
		dst := &w.Model
		switch string(name) {
		case "id":
			dst = &w.ID
		case "object":
			dst = &w.Object
		}
		*dst, err = r.String()
	case "system_fingerprint":
		if !head {
			return r.SkipString()
		}
		w.SystemFingerprint, err = r.StringPtr()
	case "service_tier":
		if !head {
			return r.SkipString()
		}
		w.ServiceTier, err = r.StringPtr()
	case "created":
		w.Created, err = r.Int()
	case "choices":
		var isNull bool
		w.Choices = r.choices[:0]
		isNull, err = r.Array(func() error {
			w.Choices = append(w.Choices, chunkChoice{})
			c := &w.Choices[len(w.Choices)-1]
			return r.Object(func(name []byte) error { return r.choiceMember(name, c) })
		})
		if isNull {
			w.Choices = nil
		}
	case "usage":
		if r.Null() {
			return nil
		}
		if r.Kind() != '{' {
			return jsonx.ErrForm
		}
		u := new(usage)
		w.Usage = u
		rr := replyReader{&r.Walker}
		return r.Object(func(name []byte) error { return rr.usage(name, u) })
	case "error":
		if !r.Null() {
			return jsonx.ErrForm
		}
		w.Error = jsonNull
	default:
		return r.Skip()
	}
	return err
}

func (r *chunkReader) choiceMember(name []byte, c *chunkChoice) error {
	var err error
	switch string(name) {
	case "index":
		c.Index, err = r.Int()
	case "delta":
		if r.Null() {
			return nil
		}
		return r.Object(func(name []byte) error { return r.deltaMember(name, &c.Delta) })
	case "finish_reason":
		c.FinishReason, err = r.StringPtr()
	case "logprobs":
		if !r.Null() {
			return jsonx.ErrForm
		}
	default:
		return r.Skip()
	}
	return err
}

func (r *chunkReader) deltaMember(name []byte, d *delta) error {
	var err error
	switch string(name) {
	case "role":
		d.Role, err = r.String()
	case "content":
		d.Content, err = r.StringPtr()
	case "refusal":
		d.Refusal, err = r.StringPtr()
	case "reasoning_content":
		d.ReasoningContent, err = r.StringPtr()
	case "reasoning":
		d.Reasoning, err = r.StringPtr()
	case "tool_calls":
		var isNull bool
		d.ToolCalls = r.calls[:0]
		isNull, err = r.Array(func() error {
			d.ToolCalls = append(d.ToolCalls, deltaToolCall{})
			tc := &d.ToolCalls[len(d.ToolCalls)-1]
			return r.Object(func(name []byte) error { return r.callMember(name, tc) })
		})
		if isNull {
			d.ToolCalls = nil
		}
	case "annotations":
		if !r.Null() {
			return jsonx.ErrForm
		}
	default:
		return r.Skip()
	}
	return err
}

func (r *chunkReader) callMember(name []byte, tc *deltaToolCall) error {
	var err error
	switch string(name) {
	case "index":
		tc.Index, err = r.Int()
	case "id":
		tc.ID, err = r.String()
	case "type":
		tc.Type, err = r.String()
	case "function":
		if r.Null() {
			return nil
		}
		fn := new(deltaFunction)
		if tc == &r.calls[0] {
			fn = &r.fns[0]
			*fn = deltaFunction{}
		}
		tc.Function = fn
		return r.Object(func(name []byte) error {
			switch string(name) {
			case "name":
				fn.Name, err = r.String()
			case "arguments":
				fn.Arguments, err = r.StringPtr()
			default:
				return r.Skip()
			}
			return err
		})
	default:
		return r.Skip()
	}
	return err
}
