// Package recorded serves the tests of the quick stream readers: the
// events of the streams recorded under the repository's testdata, and one
// benchmark shape to hold a quick reader against the reflective decoder.
package recorded

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// DataLines returns the data of every event of every recorded stream
// (.sse under testdata) that holds marker, "[DONE]" aside.
func DataLines(t testing.TB, marker string) [][]byte {
	t.Helper()
	_, here, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata")
	var out [][]byte
	err := filepath.WalkDir(root, func(path string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() || filepath.Ext(path) != ".sse" {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, []byte(marker)) {
			return err
		}
		for line := range bytes.Lines(data) {
			if d, ok := bytes.CutPrefix(bytes.TrimRight(line, "\r\n"), []byte("data: ")); ok && string(d) != "[DONE]" {
				out = append(out, bytes.Clone(d))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no recorded event holds %q", marker)
	}
	return out
}

// Bench runs quick and reflective, each reading the same event, as
// sub-benchmarks; quick must succeed.
func Bench(b *testing.B, quick func() bool, reflective func() error) {
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if !quick() {
				b.Fatal("not read the quick way")
			}
		}
	})
	b.Run("reflective", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := reflective(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Same checks a quick reader against the reflective decoder on data: when
// read reads data, jsonx.Unmarshal reads it too, to the same value once
// omit has cleared, on both sides, what the quick reader leaves out. It
// reports whether read read data.
func Same[T any](t testing.TB, data []byte, read func([]byte) (*T, bool), omit func(*T)) bool {
	t.Helper()
	w, ok := read(data)
	if !ok {
		return false
	}
	got := *w
	var want T
	if err := jsonx.Unmarshal(data, &want); err != nil {
		t.Fatalf("the quick reader read %s, which jsonx.Unmarshal refuses: %v", data, err)
	}
	omit(&got)
	omit(&want)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\nquick      %+v\nreflective %+v", data, got, want)
	}
	return true
}
