package responses

import (
	"sync"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// deltaReader reads the events most streams are made of, the deltas
// (output_text, refusal, function_call_arguments, reasoning_summary_text,
// reasoning_text), without reflection. It reads their members by name, in
// any order, and leaves any other event, or a delta with a member it does
// not know or a value of an unexpected kind, to jsonx.Unmarshal, which is
// the reference: FuzzQuickEvent holds the two to the same event, but for
// the members the stream decoder never reads from a delta (item_id,
// sequence_number, logprobs, obfuscation), which the reader checks and
// passes over.
//
// The event read lives in the reader until its next read.
type deltaReader struct {
	jsonx.Walker
	w            event
	output, part int64
	summary      int64
}

var deltaReaders = sync.Pool{New: func() any { return new(deltaReader) }}

// deltaTypes are the delta events' types, as written.
var deltaTypes = [...]string{
	"response.output_text.delta",
	"response.refusal.delta",
	"response.function_call_arguments.delta",
	"response.reasoning_summary_text.delta",
	"response.reasoning_text.delta",
}

// read reads data into the reader's event; when ok is false the event is
// zero, ready for the reflective decoder.
func (r *deltaReader) read(data []byte) (w *event, ok bool) {
	r.Reset(data)
	w = &r.w
	*w = event{}
	if err := r.Object(func(name []byte) error { return r.member(name, w) }); err == nil && w.Type != "" && r.End() {
		return w, true
	}
	*w = event{}
	return w, false
}

func (r *deltaReader) member(name []byte, w *event) error {
	var err error
	switch string(name) {
	case "type":
		if r.Kind() != '"' {
			return jsonx.ErrForm
		}
		raw, err := r.Raw()
		if err != nil || len(raw) < 2 {
			return jsonx.ErrForm
		}
		for _, t := range deltaTypes {
			if string(raw[1:len(raw)-1]) == t {
				w.Type = t
				return nil
			}
		}
		return jsonx.ErrForm
	case "output_index":
		w.OutputIndex, err = r.intPtr(&r.output)
	case "content_index":
		w.ContentIndex, err = r.intPtr(&r.part)
	case "summary_index":
		w.SummaryIndex, err = r.intPtr(&r.summary)
	case "delta":
		w.Delta, err = r.StringPtr()
	case "sequence_number":
		_, err = r.Int()
	case "item_id", "obfuscation":
		err = r.SkipString()
	case "logprobs":
		err = r.Skip()
	default:
		return jsonx.ErrForm
	}
	return err
}

// intPtr reads an integer into *at, returning at; null is nil.
func (r *deltaReader) intPtr(at *int64) (*int64, error) {
	if r.Null() {
		return nil, nil
	}
	n, err := r.Int()
	*at = n
	return at, err
}
