package messages

import (
	"bytes"
	"maps"
	"slices"
	"sync"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Most events of a stream are deltas of text, thinking or tool arguments,
// which the service writes in one form, member for member, and block
// starts, block stops, message stops and pings, fixed in form. quickEvent
// reads events of exactly those forms without reflection, and the start
// and end of the message member by member, into w as jsonx.Unmarshal
// would (TestQuickEventIsTheUnmarshalledEvent, FuzzQuickEvent); any other
// event, or anything in those it cannot read, goes the general way.
var quickDeltaPrefix = []byte(`{"type":"content_block_delta","index":`)

// quickDeltaForms are the delta forms quickEvent reads: what follows the
// index up to the text's string, and where the text goes.
var quickDeltaForms = []struct {
	form []byte
	typ  string
	set  func(*delta, *string)
}{
	{[]byte(`,"delta":{"type":"text_delta","text":`), "text_delta", func(d *delta, s *string) { d.Text = s }},
	{[]byte(`,"delta":{"type":"input_json_delta","partial_json":`), "input_json_delta", func(d *delta, s *string) { d.PartialJSON = s }},
	{[]byte(`,"delta":{"type":"thinking_delta","thinking":`), "thinking_delta", func(d *delta, s *string) { d.Thinking = s }},
}

// quickEvent holds what quick forms read, so that reading one allocates
// nothing but its text; an event read from it is valid until the next.
type quickEvent struct {
	index int64
	delta delta
	text  string
	block Block
	// empty is the empty text or thinking of a starting block, and its
	// empty signature.
	empty, emptySig string
	// r reads the start or the end of a message, while readMessage runs.
	r *jsonx.Walker
	// blocks lets message read content blocks (a whole reply's), where a
	// message_start has none.
	blocks bool
}

// walkers are the Walkers readMessage reads with, shared by streams so
// that what a Walker grows is grown once.
var walkers = sync.Pool{New: func() any { return new(jsonx.Walker) }}

var quickStartPrefix = []byte(`{"type":"content_block_start","index":`)

// quickStartForms are the block starts quickEvent reads: an empty text
// block and an empty thinking block, as the service starts them.
var quickStartForms = []struct {
	form []byte
	set  func(*quickEvent)
}{
	{[]byte(`,"content_block":{"type":"text","text":""}}`), func(q *quickEvent) {
		q.block = Block{Type: "text", Text: &q.empty}
	}},
	{[]byte(`,"content_block":{"type":"thinking","thinking":"","signature":""}}`), func(q *quickEvent) {
		q.block = Block{Type: "thinking", Thinking: &q.empty, Signature: &q.emptySig}
	}},
}

// quickSmall are events whose whole form is fixed.
var quickSmall = []struct {
	form []byte
	typ  string
}{
	{[]byte(`{"type":"message_stop"}`), "message_stop"},
	{[]byte(`{"type":"ping"}`), "ping"},
}

var quickStopPrefix = []byte(`{"type":"content_block_stop","index":`)

// read reads the events of a fixed form without reflection: text,
// argument and thinking deltas, the starts of empty text and thinking
// blocks, block stops, message stops and pings, as the service writes
// them, and message starts and ends (readMessage). ok is false for
// anything else (another spelling, more members), which jsonx.Unmarshal
// then reads.
func (q *quickEvent) read(b []byte, w *event) bool {
	for _, f := range quickSmall {
		if bytes.Equal(b, f.form) {
			*w = event{Type: f.typ}
			return true
		}
	}
	if rest, ok := bytes.CutPrefix(b, quickStopPrefix); ok {
		n, ok := q.quickIndex(rest)
		if !ok || string(rest[n:]) != "}" {
			return false
		}
		*w = event{Type: "content_block_stop", Index: &q.index}
		return true
	}
	if rest, ok := bytes.CutPrefix(b, quickStartPrefix); ok {
		n, ok := q.quickIndex(rest)
		if !ok {
			return false
		}
		for _, f := range quickStartForms {
			if bytes.Equal(rest[n:], f.form) {
				q.empty, q.emptySig = "", ""
				f.set(q)
				*w = event{Type: "content_block_start", Index: &q.index, ContentBlock: &q.block}
				return true
			}
		}
		return false
	}
	if bytes.HasPrefix(b, quickMessagePrefix) {
		return q.readMessage(b, w)
	}
	return q.blockDelta(b, w)
}

var quickMessagePrefix = []byte(`{"type":"message_`)

// readMessage reads a message_start or message_delta event member by
// member, as jsonx.Unmarshal reads it: members it does not model are kept
// as they are, a message's content must be empty (as the service starts
// it), and anything else makes it give up. Each is once a stream, but they
// are the largest events of a short one.
func (q *quickEvent) readMessage(b []byte, w *event) bool {
	r := walkers.Get().(*jsonx.Walker)
	defer func() {
		// The Walker goes back to the pool, where a request may take it
		// next: the stream must not keep it, nor what it reads then.
		q.r = nil
		walkers.Put(r)
	}()
	q.r = r
	r.Reset(b)
	*w = event{}
	err := r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			w.Type, err = q.r.Word("message_start", "message_delta")
		case "message":
			if r.Null() {
				w.Message = nil
				return nil
			}
			w.Message = &Response{}
			err = q.message(w.Message)
		case "delta":
			if r.Null() {
				w.Delta = nil
				return nil
			}
			w.Delta = &delta{}
			err = q.stop(w.Delta)
		case "usage":
			w.Usage, err = q.usage()
		default:
			return jsonx.ErrForm
		}
		return err
	})
	if err != nil || !r.End() || (w.Type != "message_start" && w.Type != "message_delta") {
		*w = event{}
		return false
	}
	return true
}

// message reads the message of a message_start.
func (q *quickEvent) message(m *Response) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "id":
			m.ID, err = r.String()
		case "type":
			m.Type, err = q.r.Word("message")
		case "role":
			m.Role, err = q.r.Word("assistant")
		case "model":
			m.Model, err = r.String()
		case "content":
			var isNull bool
			m.Content = nil
			isNull, err = r.Array(func() error {
				if !q.blocks {
					return jsonx.ErrForm
				}
				m.Content = append(m.Content, Block{})
				return q.anyBlock(&m.Content[len(m.Content)-1])
			})
			if !isNull && m.Content == nil {
				m.Content = []Block{}
			}
		case "stop_reason":
			m.StopReason, err = q.r.WordPtr(stopWords...)
		case "stop_sequence":
			m.StopSequence, err = q.r.WordPtr()
		case "usage":
			m.Usage, err = q.usage()
		default:
			m.Unknown, err = q.r.Keep(m.Unknown, name)
		}
		return err
	})
}

// quickResponse reads a whole reply as jsonx.Unmarshal would, without
// reflection, blocks of every type with members Parley does not model
// kept as they are; ok is false for anything it does not expect, which
// the general way then reads (TestQuickResponseIsTheUnmarshalledResponse,
// FuzzQuickResponse).
func quickResponse(b []byte, m *Response) (ok bool) {
	r := walkers.Get().(*jsonx.Walker)
	defer walkers.Put(r)
	r.Reset(b)
	q := quickEvent{r: r, blocks: true}
	*m = Response{}
	if err := q.message(m); err != nil || !r.End() {
		*m = Response{}
		return false
	}
	return true
}

// anyBlock reads a content block, of any type: a block is one struct of
// every type's members.
func (q *quickEvent) anyBlock(b *Block) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			b.Type, err = r.Word("text", "thinking", "tool_use", "tool_result", "image", "document")
		case "text":
			b.Text, err = q.r.WordPtr()
		case "citations":
			b.Citations, err = q.r.Copy()
		case "source":
			b.Source, err = q.r.Copy()
		case "title":
			b.Title, err = q.r.WordPtr()
		case "context":
			b.Context, err = q.r.WordPtr()
		case "id":
			b.ID, err = r.String()
		case "name":
			b.Name, err = r.String()
		case "input":
			b.Input, err = q.r.Copy()
		case "tool_use_id":
			b.ToolUseID, err = r.String()
		case "content":
			b.Content, err = q.r.Copy()
		case "is_error":
			b.IsError, err = r.BoolPtr(new(bool))
		case "thinking":
			b.Thinking, err = q.r.WordPtr()
		case "signature":
			b.Signature, err = q.r.WordPtr()
		case "data":
			b.Data, err = r.String()
		case "cache_control":
			b.CacheControl, err = q.cacheControl()
		default:
			b.Unknown, err = q.r.Keep(b.Unknown, name)
		}
		return err
	})
}

// cacheControl reads a prompt-caching breakpoint, or null as nil.
func (q *quickEvent) cacheControl() (*cacheControl, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	c := &cacheControl{}
	return c, r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "type":
			c.Type, err = r.Word("ephemeral")
		case "ttl":
			c.TTL, err = r.Word("5m", "1h")
		default:
			c.Unknown, err = q.r.Keep(c.Unknown, name)
		}
		return err
	})
}

// stop reads the delta of a message_delta.
func (q *quickEvent) stop(d *delta) error {
	r := q.r
	return r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "stop_reason":
			d.StopReason, err = q.r.WordPtr(stopWords...)
		case "stop_sequence":
			d.StopSequence, err = q.r.WordPtr()
		case "type", "text", "partial_json", "thinking", "signature", "citation":
			return jsonx.ErrForm
		default:
			d.Unknown, err = q.r.Keep(d.Unknown, name)
		}
		return err
	})
}

// usage reads a usage object, or null as nil.
func (q *quickEvent) usage() (*usage, error) {
	r := q.r
	if r.Null() {
		return nil, nil
	}
	u := &usage{}
	// The counts are read into one allocation, made at the first.
	var counts *[6]int64
	count := func(i int) (*int64, error) {
		if counts == nil {
			counts = new([6]int64)
		}
		return r.IntAt(&counts[i])
	}
	return u, r.Object(func(name []byte) error {
		var err error
		switch string(name) {
		case "input_tokens":
			u.InputTokens, err = count(0)
		case "output_tokens":
			u.OutputTokens, err = count(1)
		case "cache_creation_input_tokens":
			u.CacheCreationInputTokens, err = count(2)
		case "cache_read_input_tokens":
			u.CacheReadInputTokens, err = count(3)
		case "service_tier":
			u.ServiceTier, err = q.r.Word("standard", "priority", "batch")
		case "cache_creation":
			if r.Null() {
				u.CacheCreation = nil
				return nil
			}
			c := &cacheCreation{}
			u.CacheCreation = c
			err = r.Object(func(name []byte) error {
				var err error
				switch string(name) {
				case "ephemeral_5m_input_tokens":
					c.Ephemeral5m, err = count(4)
				case "ephemeral_1h_input_tokens":
					c.Ephemeral1h, err = count(5)
				default:
					c.Unknown, err = q.r.Keep(c.Unknown, name)
				}
				return err
			})
		case "server_tool_use", "output_tokens_details":
			return jsonx.ErrForm // rare: the general way reads them
		default:
			u.Unknown, err = q.r.Keep(u.Unknown, name)
		}
		return err
	})
}

// stopWords are the stop reasons the service gives.
var stopWords = slices.Sorted(maps.Keys(stopReasons))

// quickIndex reads the index b starts with: n digits, no leading zero.
func (q *quickEvent) quickIndex(b []byte) (n int, ok bool) {
	var index int64
	for ; n < len(b) && n < 9 && b[n] >= '0' && b[n] <= '9'; n++ {
		index = index*10 + int64(b[n]-'0')
	}
	if n == 0 || n == 9 || n > 1 && b[0] == '0' {
		return 0, false
	}
	q.index = index
	return n, true
}

func (q *quickEvent) blockDelta(b []byte, w *event) bool {
	if !bytes.HasPrefix(b, quickDeltaPrefix) {
		return false
	}
	b = b[len(quickDeltaPrefix):]
	n, ok := q.quickIndex(b)
	if !ok {
		return false
	}
	b = b[n:]
	for _, f := range quickDeltaForms {
		if !bytes.HasPrefix(b, f.form) {
			continue
		}
		str := b[len(f.form):]
		end := stringEnd(str)
		if end < 0 || string(str[end:]) != "}}" {
			return false
		}
		s, ok := jsonx.Unquote(str[:end])
		if !ok {
			return false
		}
		q.text = s
		q.delta = delta{Type: f.typ}
		f.set(&q.delta, &q.text)
		*w = event{Type: "content_block_delta", Index: &q.index, Delta: &q.delta}
		return true
	}
	return false
}

// stringEnd is the length of the JSON string token b starts with, or -1.
func stringEnd(b []byte) int {
	if len(b) == 0 || b[0] != '"' {
		return -1
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}
