package dialecttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/sse"
)

// checkNames fails t unless b, a JSON body a dialect encoded, is one JSON
// value in which no object repeats a member name. The golden comparisons
// decode with encoding/json, which keeps the last of repeated members, so
// without this an encoder that writes a member twice would pass them while
// a strict reader on the other side refuses the body or takes the other
// value. A jsontext decoder rejects duplicate names unless told
// AllowDuplicateNames(true).
func checkNames(t testing.TB, what string, b []byte) {
	t.Helper()
	dec := jsontext.NewDecoder(bytes.NewReader(b))
	if _, err := dec.ReadValue(); err != nil {
		t.Errorf("%s: %v\n%s", what, err, b)
		return
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		t.Errorf("%s: more after the JSON value (%v)\n%s", what, err, b)
	}
}

// checkStreamNames runs checkNames on the data of every event of an
// encoded stream but chat completions' closing "[DONE]", which is not JSON.
func checkStreamNames(t testing.TB, stream []byte) {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(stream), 0)
	for i := 0; ; i++ {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Errorf("the encoded stream does not read: %v", err)
			return
		}
		if string(ev.Data) == "[DONE]" {
			continue
		}
		what := fmt.Sprintf("stream event %d", i)
		if ev.Type != "" {
			what += " (" + ev.Type + ")"
		}
		checkNames(t, what, ev.Data)
	}
}
