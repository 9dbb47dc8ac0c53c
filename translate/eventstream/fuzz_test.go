package eventstream_test

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/parleyhq/parley/translate"
	es "github.com/parleyhq/parley/translate/eventstream"
)

// FuzzReader feeds arbitrary bytes to the reader: it must end with one of
// its documented errors, never panic, and never yield an event past an
// error.
func FuzzReader(f *testing.F) {
	var seed bytes.Buffer
	_ = es.Encode(&seed, "messageStart", []byte(`{"role":"assistant"}`))
	_ = es.EncodeChunk(&seed, []byte(`{"type":"message_stop"}`))
	_ = es.EncodeException(&seed, "validationException", "bad")
	f.Add(seed.Bytes())
	f.Add(seed.Bytes()[:len(seed.Bytes())/2])
	f.Add([]byte{0, 0, 0, 16, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := es.NewReader(d, bytes.NewReader(data), 1<<16)
		for i := 0; i < 1<<12; i++ {
			_, err := r.Next()
			if err == nil {
				continue
			}
			var up *translate.UpstreamError
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, es.ErrFrameTooLarge) && !errors.As(err, &up) {
				t.Fatalf("undocumented error %T: %v", err, err)
			}
			return
		}
	})
}
