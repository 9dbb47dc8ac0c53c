package jsonx

import (
	"bytes"
	"errors"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// Walker reads a JSON value token by token, for the quick readers of
// stream events: the events most streams are made of are read without
// reflection, by member name, and anything a quick reader does not expect
// makes it give up (ErrForm) so that Unmarshal reads the event instead.
// A Walker accepts only what Unmarshal accepts, in the same way (a member
// repeated is refused, where Unmarshal lets the last one win, so that such
// an event too is left to Unmarshal).
//
// Strings read with StringPtr live in the Walker until the next Reset.
type Walker struct {
	rd   bytes.Reader
	dec  jsontext.Decoder
	strs [8]string
	nstr int
}

// ErrForm says that a value is not in the form a quick reader reads.
var ErrForm = errors.New("jsonx: not the quick form")

var walkOptions = jsontext.AllowDuplicateNames(false)

// Reset starts reading data.
func (w *Walker) Reset(data []byte) {
	w.rd.Reset(data)
	w.dec.Reset(&w.rd, walkOptions)
	w.nstr = 0
}

// End reports whether the value read was the whole input.
func (w *Walker) End() bool {
	_, err := w.dec.ReadToken()
	return errors.Is(err, io.EOF)
}

// Kind is the kind of the next token.
func (w *Walker) Kind() jsontext.Kind { return w.dec.PeekKind() }

// Object reads a JSON object, calling member with each name (without its
// quotes); member reads the value. A name spelled with escapes is
// ErrForm: it may stand for a name the reader knows.
func (w *Walker) Object(member func(name []byte) error) error {
	if tok, err := w.dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return ErrForm
	}
	for w.dec.PeekKind() == '"' {
		name, err := w.dec.ReadValue()
		if err != nil || bytes.IndexByte(name, '\\') >= 0 {
			return ErrForm
		}
		if err := member(name[1 : len(name)-1]); err != nil {
			return err
		}
	}
	if tok, err := w.dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return ErrForm
	}
	return nil
}

// Array reads a JSON array, or null (isNull, calling nothing), calling
// elem for each element; elem reads it.
func (w *Walker) Array(elem func() error) (isNull bool, err error) {
	if w.Null() {
		return true, nil
	}
	if tok, err := w.dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return false, ErrForm
	}
	for w.dec.PeekKind() != ']' {
		if w.dec.PeekKind() == 0 {
			return false, ErrForm
		}
		if err := elem(); err != nil {
			return false, err
		}
	}
	if _, err := w.dec.ReadToken(); err != nil {
		return false, ErrForm
	}
	return false, nil
}

// Null reads a null if one comes next.
func (w *Walker) Null() bool {
	if w.dec.PeekKind() != 'n' {
		return false
	}
	_, err := w.dec.ReadToken()
	return err == nil
}

// String reads a string, or null as "" (as Unmarshal leaves a string).
func (w *Walker) String() (string, error) {
	if w.Null() {
		return "", nil
	}
	if w.dec.PeekKind() != '"' {
		return "", ErrForm
	}
	v, err := w.dec.ReadValue()
	if err != nil {
		return "", ErrForm
	}
	s, ok := Unquote(v)
	if !ok {
		return "", ErrForm
	}
	return s, nil
}

// StringPtr reads a string, or null as nil.
func (w *Walker) StringPtr() (*string, error) {
	if w.Null() {
		return nil, nil
	}
	s, err := w.String()
	if err != nil {
		return nil, err
	}
	var p *string
	if w.nstr < len(w.strs) {
		p = &w.strs[w.nstr]
		w.nstr++
	} else {
		p = new(string)
	}
	*p = s
	return p, nil
}

// SkipString passes over a string or null.
func (w *Walker) SkipString() error {
	if k := w.dec.PeekKind(); k != '"' && k != 'n' {
		return ErrForm
	}
	return w.Skip()
}

// Int reads an integer as Unmarshal reads one into an int64 (digits only,
// in range), or null as 0.
func (w *Walker) Int() (int64, error) {
	if w.Null() {
		return 0, nil
	}
	if w.dec.PeekKind() != '0' {
		return 0, ErrForm
	}
	v, err := w.dec.ReadValue()
	if err != nil {
		return 0, ErrForm
	}
	neg := len(v) > 0 && v[0] == '-'
	if neg {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0, ErrForm
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, ErrForm
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// Raw reads the next value whole; it is valid until the next read.
func (w *Walker) Raw() (jsontext.Value, error) {
	v, err := w.dec.ReadValue()
	if err != nil {
		return nil, ErrForm
	}
	return v, nil
}

// Skip passes over the next value, whatever it is.
func (w *Walker) Skip() error {
	if err := w.dec.SkipValue(); err != nil {
		return ErrForm
	}
	return nil
}

// BoolPtr reads true or false into *at, returning at; null is nil.
func (w *Walker) BoolPtr(at *bool) (*bool, error) {
	switch w.dec.PeekKind() {
	case 'n':
		w.Null()
		return nil, nil
	case 't', 'f':
		tok, err := w.dec.ReadToken()
		if err != nil {
			return nil, ErrForm
		}
		*at = tok.Bool()
		return at, nil
	}
	return nil, ErrForm
}
