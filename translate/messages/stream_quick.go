package messages

import (
	"bytes"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Most events of a stream are deltas of text, thinking or tool arguments,
// which the service writes in one form, member for member, and block
// starts, block stops, message stops and pings, fixed in form. quickEvent
// reads events of exactly those forms without reflection, into w as
// jsonx.Unmarshal would (TestQuickEventIsTheUnmarshalledEvent); any other
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
}

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
// them. ok is false for anything else (another spelling, more members),
// which jsonx.Unmarshal then reads.
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
	return q.blockDelta(b, w)
}

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
