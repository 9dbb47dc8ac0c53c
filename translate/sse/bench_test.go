package sse_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/parleyhq/parley/translate/sse"
)

// benchStream is 500 events shaped like a messages-style text stream.
var benchStream = func() []byte {
	var b strings.Builder
	for i := 0; i < 500; i++ {
		b.WriteString("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"some words of text \"}}\n\n")
	}
	return []byte(b.String())
}()

// readCount reads every event of r and fails unless there are want.
func readCount(b *testing.B, r *sse.Reader, want int) {
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	if n != want {
		b.Fatalf("read %d events, want %d", n, want)
	}
}

func BenchmarkReader500Events(b *testing.B) {
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		readCount(b, sse.NewReader(bytes.NewReader(benchStream), 0), 500)
	}
}

func BenchmarkWriter500Events(b *testing.B) {
	data := []byte(`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"some words of text "}}`)
	b.ReportAllocs()
	w := sse.NewWriter(io.Discard)
	for b.Loop() {
		for i := 0; i < 500; i++ {
			if err := w.Event("content_block_delta", data); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// eventReads returns one event per read, as a stream whose upstream sends
// each token as it comes arrives.
type eventReads struct {
	events [][]byte
	i      int
}

func (e *eventReads) Read(p []byte) (int, error) {
	if e.i == len(e.events) {
		return 0, io.EOF
	}
	n := copy(p, e.events[e.i])
	if e.events[e.i] = e.events[e.i][n:]; len(e.events[e.i]) == 0 {
		e.i++
	}
	return n, nil
}

// BenchmarkReaderEventPerRead reads 500 events that arrive one per read,
// each read made with nothing buffered.
func BenchmarkReaderEventPerRead(b *testing.B) {
	events := bytes.SplitAfter(benchStream, []byte("\n\n"))
	events = events[:len(events)-1]
	src := &eventReads{events: make([][]byte, len(events))}
	b.SetBytes(int64(len(benchStream)))
	b.ReportAllocs()
	for b.Loop() {
		copy(src.events, events)
		src.i = 0
		r := sse.NewReader(src, 0)
		readCount(b, r, 500)
		r.Release()
	}
}
