// Package recorded serves the tests of the quick readers and writers: the
// events, bodies and canonical values recorded under the repository's
// testdata, one benchmark shape to hold a quick reader against the
// reflective decoder, and the checks that hold a reader to jsonx.Unmarshal
// and a writer to jsonx.Marshal.
package recorded

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// root is the repository's testdata folder.
func root() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(here), "..", "..", "..", "testdata")
}

// Files returns the files under testdata matching patterns (relative to
// testdata, as filepath.Glob reads them); it fails with fewer than least.
func Files(t testing.TB, least int, patterns ...string) [][]byte {
	t.Helper()
	var out [][]byte
	for _, pattern := range patterns {
		paths, err := filepath.Glob(filepath.Join(root(), pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b)
		}
	}
	if len(out) < least {
		t.Fatalf("%d files match %q, want at least %d", len(out), patterns, least)
	}
	return out
}

// Variants are the bytes of forms written in a test.
func Variants(forms []string) [][]byte {
	out := make([][]byte, len(forms))
	for i, f := range forms {
		out[i] = []byte(f)
	}
	return out
}

// Canonical returns the canonical values of every file under testdata
// named name ("request.canonical.json"), each read into a new M.
func Canonical[M proto.Message](t testing.TB, name string, newM func() M) []M {
	t.Helper()
	var out []M
	err := filepath.WalkDir(root(), func(p string, e os.DirEntry, err error) error {
		if err == nil && e.Name() == name {
			m := newM()
			golden.ReadProto(t, p, m)
			out = append(out, m)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no file named %s", name)
	}
	return out
}

// Stream is a recorded canonical stream: the events of a
// stream.canonical.json under testdata, and its path.
type Stream struct {
	Path   string
	Events []*parleyv1.StreamEvent
}

// Streams returns every recorded canonical stream; it fails with fewer
// than least.
func Streams(t testing.TB, least int) []Stream {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root(), "*", "*", "stream.canonical.json"))
	if err != nil || len(paths) < least {
		t.Fatalf("%d canonical streams, want at least %d: %v", len(paths), least, err)
	}
	out := make([]Stream, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[i] = Stream{Path: p, Events: make([]*parleyv1.StreamEvent, len(raws))}
		for j, r := range raws {
			out[i].Events[j] = new(parleyv1.StreamEvent)
			if err := protojson.Unmarshal(r, out[i].Events[j]); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
	}
	return out
}

// Decoded holds a quick reader of whole bodies to jsonx.Unmarshal on data:
// declining, it must leave its value zero; reading, it must read what
// Unmarshal reads. It reports whether read read data. It reports what is
// wrong as an error, not a fatal one, for fuzz targets too.
func Decoded[T any](t testing.TB, data []byte, read func([]byte, *T) bool) bool {
	t.Helper()
	var fast T
	if !read(data, &fast) {
		var zero T
		if !reflect.DeepEqual(fast, zero) {
			t.Errorf("%s: declined, leaving %+v", data, fast)
		}
		return false
	}
	var slow T
	if err := jsonx.Unmarshal(data, &slow); err != nil {
		t.Errorf("the quick reader read %s, which jsonx.Unmarshal refuses: %v", data, err)
		return true
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("%s:\nquick      %+v\nreflective %+v", data, fast, slow)
	}
	return true
}

// Encoded holds a quick writer to jsonx.Marshal on every value of vs:
// what it writes must be the bytes Marshal writes. It returns which of
// them it wrote.
func Encoded[T any](t testing.TB, vs []*T, write func([]byte, *T) ([]byte, bool)) []bool {
	t.Helper()
	wrote := make([]bool, len(vs))
	for i, v := range vs {
		got, ok := write(nil, v)
		if !ok {
			continue
		}
		wrote[i] = true
		want, err := jsonx.Marshal(v)
		if err != nil {
			t.Errorf("the quick writer wrote %s, which jsonx.Marshal refuses: %v", got, err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("\n got %s\nwant %s", got, want)
		}
	}
	return wrote
}

// ReadAndWritten holds read to jsonx.Unmarshal (Decoded) on data and,
// when Unmarshal reads data, write to jsonx.Marshal (Encoded) on what it
// read: a fuzz target's body for a dialect's reader and writer of one
// type.
func ReadAndWritten[T any](t testing.TB, data []byte, read func([]byte, *T) bool, write func([]byte, *T) ([]byte, bool)) {
	t.Helper()
	Decoded(t, data, read)
	v := new(T)
	if jsonx.Unmarshal(data, v) == nil {
		Encoded(t, []*T{v}, write)
	}
}

// EncodedMadeAndRead holds write to jsonx.Marshal (Encoded) on made,
// what an encoder made of recorded canonical values, and on what
// jsonx.Unmarshal reads of bodies (the recorded wire bodies and awkward
// variants), and fails unless write wrote nine in ten of the first and
// eight in ten of the others itself.
func EncodedMadeAndRead[T any](t testing.TB, made []*T, bodies [][]byte, write func([]byte, *T) ([]byte, bool)) {
	t.Helper()
	values := made[:len(made):len(made)]
	for _, b := range bodies {
		v := new(T)
		if jsonx.Unmarshal(b, v) == nil {
			values = append(values, v)
		}
	}
	madeQuick, quick := Count(Encoded(t, values, write), len(made))
	others := len(values) - len(made)
	if madeQuick < len(made)*9/10 || quick < others*8/10 {
		t.Errorf("wrote %d of %d values made by the encoder and %d of %d others without reflection", madeQuick, len(made), quick, others)
	}
	t.Logf("wrote %d of %d values made by the encoder and %d of %d others without reflection", madeQuick, len(made), quick, others)
}

// Count is how many of the first n of wrote, and of the rest, are true.
func Count(wrote []bool, n int) (first, rest int) {
	for i, w := range wrote {
		switch {
		case !w:
		case i < n:
			first++
		default:
			rest++
		}
	}
	return first, rest
}

// DecodedAll holds a quick reader to jsonx.Unmarshal (Decoded) on every
// recorded body and every variant, and counts what it read of each.
func DecodedAll[T any](t testing.TB, bodies, variants [][]byte, read func([]byte, *T) bool) (fromRecorded, fromVariants int) {
	t.Helper()
	for i, b := range append(bodies[:len(bodies):len(bodies)], variants...) {
		switch {
		case !Decoded(t, b, read):
		case i < len(bodies):
			fromRecorded++
		default:
			fromVariants++
		}
	}
	return fromRecorded, fromVariants
}

// DataLines returns the data of every event of every recorded stream
// (.sse under testdata) that holds marker, "[DONE]" aside.
func DataLines(t testing.TB, marker string) [][]byte {
	t.Helper()
	var out [][]byte
	err := filepath.WalkDir(root(), func(path string, e os.DirEntry, err error) error {
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
