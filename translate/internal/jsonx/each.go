package jsonx

import (
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Each decodes a JSON array one element at a time, handing each to Fn as
// soon as it is read, so that the wire form of only one element is alive
// at once: a request of very many messages is turned into canonical ones
// without first holding all of them in their wire form too.
//
// Errors keep the order of decoding the whole array first: after Fn's
// first error the rest of the array is still read, so that malformed
// JSON after it is reported in its place, and Fn's error waits in Err
// for the caller to report once the whole body has been read. A null
// is an empty array; anything else but an array fails as decoding it
// into []T would.
type Each[T any] struct {
	// Fn receives each element, with its index. *v is cleared and
	// reused for the next element: Fn may keep what v's fields hold, but
	// not v.
	Fn func(i int, v *T) error
	// Reset, when set, is called as each array begins: of a member sent
	// twice, the last array wins.
	Reset func()
	// N counts the elements of the last array read.
	N int
	// Err is Fn's first error.
	Err error
}

var _ json.UnmarshalerFrom = (*Each[struct{}])(nil)

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (e *Each[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	switch dec.PeekKind() {
	case 'n':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		e.start()
		return nil
	case '[':
	default:
		var whole []T
		return json.UnmarshalDecode(dec, &whole)
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	e.start()
	var v T
	for dec.PeekKind() != ']' {
		var zero T
		v = zero
		if err := json.UnmarshalDecode(dec, &v); err != nil {
			return err
		}
		if e.Err == nil {
			e.Err = e.Fn(e.N, &v)
		}
		e.N++
	}
	_, err := dec.ReadToken()
	return err
}

func (e *Each[T]) start() {
	e.N, e.Err = 0, nil
	if e.Reset != nil {
		e.Reset()
	}
}
