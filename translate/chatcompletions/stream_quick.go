package chatcompletions

import (
	"bytes"
	"errors"
	"io"
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
	rd  bytes.Reader
	dec jsontext.Decoder
	w   chunk

	choices [1]chunkChoice
	calls   [1]deltaToolCall
	fns     [1]deltaFunction
	strs    [8]string
	nstr    int
}

// chunkReaders are shared by every stream: a reader is held only while
// one chunk is decoded, so a stream that waits holds none.
var chunkReaders = sync.Pool{New: func() any { return new(chunkReader) }}

// quickOptions reject repeated names, which the reflective decoder allows
// (the last one wins): such a chunk is left to it.
var quickOptions = jsontext.AllowDuplicateNames(false)

var errQuick = errors.New("not a quick chunk")

// jsonNull is the raw value the reflective decoder keeps for a null error.
var jsonNull = jsontext.Value("null")

// read reads data into the reader's chunk, which it returns; head asks
// for the header members (id, model...), which the stream decoder reads
// from its first chunk only. When ok is false the chunk is zero, ready for
// the reflective decoder.
func (r *chunkReader) read(data []byte, head bool) (w *chunk, ok bool) {
	r.rd.Reset(data)
	r.dec.Reset(&r.rd, quickOptions)
	r.nstr = 0
	w = &r.w
	*w = chunk{}
	if err := r.object(func(name []byte) error { return r.chunkMember(name, w, head) }); err == nil {
		if _, err := r.dec.ReadToken(); errors.Is(err, io.EOF) {
			return w, true
		}
	}
	*w = chunk{}
	return w, false
}

// object reads one JSON object, calling member for each name; the member
// function reads the value.
func (r *chunkReader) object(member func(name []byte) error) error {
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return errQuick
	}
	for r.dec.PeekKind() == '"' {
		name, err := r.dec.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return errQuick
		}
		if err := member(name[1 : len(name)-1]); err != nil {
			return err
		}
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return errQuick
	}
	return nil
}

// array reads a JSON array (or null, calling nothing), calling elem for
// each element.
func (r *chunkReader) array(elem func() error) (isNull bool, err error) {
	if r.null() {
		return true, nil
	}
	if tok, err := r.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return false, errQuick
	}
	for r.dec.PeekKind() != ']' {
		if r.dec.PeekKind() == 0 {
			return false, errQuick
		}
		if err := elem(); err != nil {
			return false, err
		}
	}
	_, err = r.dec.ReadToken()
	return false, err
}

// null reads a null if one comes next.
func (r *chunkReader) null() bool {
	if r.dec.PeekKind() != 'n' {
		return false
	}
	_, err := r.dec.ReadToken()
	return err == nil
}

// str reads a string or null ("" for null, as the reflective decoder
// leaves a string member).
func (r *chunkReader) str() (string, error) {
	if r.null() {
		return "", nil
	}
	if r.dec.PeekKind() != '"' {
		return "", errQuick
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return "", errQuick
	}
	s, ok := jsonx.Unquote(v)
	if !ok {
		return "", errQuick
	}
	return s, nil
}

// strp reads a string or null into a *string, nil for null.
func (r *chunkReader) strp() (*string, error) {
	if r.null() {
		return nil, nil
	}
	s, err := r.str()
	if err != nil {
		return nil, err
	}
	var p *string
	if r.nstr < len(r.strs) {
		p = &r.strs[r.nstr]
		r.nstr++
	} else {
		p = new(string)
	}
	*p = s
	return p, nil
}

// skipString checks that a string or null comes next and passes over it.
func (r *chunkReader) skipString() error {
	if k := r.dec.PeekKind(); k != '"' && k != 'n' {
		return errQuick
	}
	return r.dec.SkipValue()
}

// integer reads an integer or null (0) as the reflective decoder reads it
// into an int64: digits only, in range.
func (r *chunkReader) integer() (int64, error) {
	if r.null() {
		return 0, nil
	}
	if r.dec.PeekKind() != '0' {
		return 0, errQuick
	}
	v, err := r.dec.ReadValue()
	if err != nil {
		return 0, errQuick
	}
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, errQuick
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, errQuick
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

func (r *chunkReader) chunkMember(name []byte, w *chunk, head bool) error {
	var err error
	switch string(name) {
	case "id", "object", "model":
		if !head {
			return r.skipString()
		}
		// name points into the decoder's buffer, which reading the value
		// moves: pick the member first.
		dst := &w.Model
		switch string(name) {
		case "id":
			dst = &w.ID
		case "object":
			dst = &w.Object
		}
		*dst, err = r.str()
	case "system_fingerprint":
		if !head {
			return r.skipString()
		}
		w.SystemFingerprint, err = r.strp()
	case "service_tier":
		if !head {
			return r.skipString()
		}
		w.ServiceTier, err = r.strp()
	case "created":
		w.Created, err = r.integer()
	case "choices":
		var isNull bool
		w.Choices = r.choices[:0]
		isNull, err = r.array(func() error {
			w.Choices = append(w.Choices, chunkChoice{})
			c := &w.Choices[len(w.Choices)-1]
			return r.object(func(name []byte) error { return r.choiceMember(name, c) })
		})
		if isNull {
			w.Choices = nil
		}
	case "usage":
		if r.null() {
			return nil
		}
		if r.dec.PeekKind() != '{' {
			return errQuick
		}
		v, err := r.dec.ReadValue()
		if err != nil {
			return errQuick
		}
		w.Usage = new(usage)
		return jsonx.Unmarshal(v, w.Usage)
	case "error":
		if !r.null() {
			return errQuick
		}
		w.Error = jsonNull
	default:
		return r.dec.SkipValue()
	}
	return err
}

func (r *chunkReader) choiceMember(name []byte, c *chunkChoice) error {
	var err error
	switch string(name) {
	case "index":
		c.Index, err = r.integer()
	case "delta":
		if r.null() {
			return nil
		}
		return r.object(func(name []byte) error { return r.deltaMember(name, &c.Delta) })
	case "finish_reason":
		c.FinishReason, err = r.strp()
	case "logprobs":
		if !r.null() {
			return errQuick
		}
	default:
		return r.dec.SkipValue()
	}
	return err
}

func (r *chunkReader) deltaMember(name []byte, d *delta) error {
	var err error
	switch string(name) {
	case "role":
		d.Role, err = r.str()
	case "content":
		d.Content, err = r.strp()
	case "refusal":
		d.Refusal, err = r.strp()
	case "reasoning_content":
		d.ReasoningContent, err = r.strp()
	case "reasoning":
		d.Reasoning, err = r.strp()
	case "tool_calls":
		var isNull bool
		d.ToolCalls = r.calls[:0]
		isNull, err = r.array(func() error {
			d.ToolCalls = append(d.ToolCalls, deltaToolCall{})
			tc := &d.ToolCalls[len(d.ToolCalls)-1]
			return r.object(func(name []byte) error { return r.callMember(name, tc) })
		})
		if isNull {
			d.ToolCalls = nil
		}
	case "annotations":
		if !r.null() {
			return errQuick
		}
	default:
		return r.dec.SkipValue()
	}
	return err
}

func (r *chunkReader) callMember(name []byte, tc *deltaToolCall) error {
	var err error
	switch string(name) {
	case "index":
		tc.Index, err = r.integer()
	case "id":
		tc.ID, err = r.str()
	case "type":
		tc.Type, err = r.str()
	case "function":
		if r.null() {
			return nil
		}
		fn := new(deltaFunction)
		if tc == &r.calls[0] {
			fn = &r.fns[0]
			*fn = deltaFunction{}
		}
		tc.Function = fn
		return r.object(func(name []byte) error {
			switch string(name) {
			case "name":
				fn.Name, err = r.str()
			case "arguments":
				fn.Arguments, err = r.strp()
			default:
				return r.dec.SkipValue()
			}
			return err
		})
	default:
		return r.dec.SkipValue()
	}
	return err
}
