// Package golden is the one helper behind every golden-file test.
//
// A dialect's cases live in testdata/<dialect>/<case>/, each a folder of wire
// inputs, canonical forms (protojson) and wire outputs, including recorded
// event streams (*.sse). Comparisons are semantic: JSON documents are equal
// when they hold the same values whatever their key order, spacing or number
// spelling; event streams are equal when they hold the same events with
// semantically equal data. A failed comparison prints a readable diff and says
// how to accept the new output:
//
//	go test ./... -update
//
// rewrites every golden file that a test compares with, in a stable indented
// form. Every test binary in the module links this package (directly or
// through a dialect's tests), so the flag is known to all of them; .ci/run
// checks that.
package golden

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/parleyhq/parley/translate/sse"
)

var update = flag.Bool("update", false, "rewrite golden files with the output of the code under test")

// Case is one golden case folder.
type Case struct {
	Name string
	Dir  string
}

// Meta is a case's case.json: where its wire data comes from and what it
// is expected to lose or normalise.
type Meta struct {
	// Description says what the case covers.
	Description string `json:"description"`
	// Source names where the wire data was taken from (an SDK fixture, a
	// documentation page, a recording), so that it can be checked.
	Source string `json:"source"`
	// Normalised lists what a same-dialect round trip changes, when it does
	// not give back its input byte for byte in meaning.
	Normalised []string `json:"normalised,omitempty"`
	// Losses lists, per target dialect, what cannot be carried there.
	Losses map[string][]string `json:"losses,omitempty"`
	// Status is the HTTP status of a recorded error reply.
	Status int `json:"status,omitempty"`
	// Client and Upstream name the dialects of a cross-dialect case (the
	// client speaks one, the upstream the other), as translate.DialectName
	// spells them.
	Client   string `json:"client,omitempty"`
	Upstream string `json:"upstream,omitempty"`
	// Rules names the mapping rules a cross-dialect case pins, in the
	// words of the packages' documentation.
	Rules []string `json:"rules,omitempty"`
}

// Cases returns the case folders under dir, sorted by name. It fails the
// test when there are none, so that a misplaced folder cannot pass silently.
func Cases(t testing.TB, dir string) []Case {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("golden cases: %v", err)
	}
	var cases []Case
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, Case{Name: e.Name(), Dir: filepath.Join(dir, e.Name())})
		}
	}
	if len(cases) == 0 {
		t.Fatalf("golden cases: no case folders in %s", dir)
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].Name < cases[j].Name })
	return cases
}

// Path returns the path of a file of the case.
func (c Case) Path(name string) string { return filepath.Join(c.Dir, name) }

// Exists reports whether the case has the named file.
func (c Case) Exists(name string) bool {
	_, err := os.Stat(c.Path(name))
	return err == nil
}

// Read returns the named file of the case, failing the test when it is
// missing.
func (c Case) Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(c.Path(name))
	if err != nil {
		t.Fatalf("case %s: %v", c.Name, err)
	}
	return b
}

// Meta reads the case's case.json; a case without one fails the test,
// because every case must say where its data comes from.
func (c Case) Meta(t testing.TB) Meta {
	t.Helper()
	var m Meta
	dec := json.NewDecoder(bytes.NewReader(c.Read(t, "case.json")))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("case %s: case.json: %v", c.Name, err)
	}
	if m.Source == "" {
		t.Fatalf("case %s: case.json has no source", c.Name)
	}
	return m
}

// JSON compares got with the JSON golden file at path.
func JSON(t testing.TB, path string, got []byte, opts ...Option) {
	t.Helper()
	if *update {
		write(t, path, indentJSON(t, got))
		return
	}
	want := readGolden(t, path)
	diff, err := DiffJSON(want, got, opts...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if diff != "" {
		t.Errorf("%s differs from the golden file (-want +got):\n%s\n%s", path, diff, hint)
	}
}

// Proto compares msg with the protojson golden file at path.
func Proto(t testing.TB, path string, msg proto.Message) {
	t.Helper()
	got, err := protojson.Marshal(msg)
	if err != nil {
		t.Fatalf("%s: marshal: %v", path, err)
	}
	JSON(t, path, got)
}

// ReadProto reads the protojson file at path into msg. Unknown fields are
// an error, so that a stale golden file is noticed.
func ReadProto(t testing.TB, path string, msg proto.Message) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	if err := protojson.Unmarshal(b, msg); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// SSE compares an event stream with the golden stream at path: the same
// events in the same order, with the same types and semantically equal data.
func SSE(t testing.TB, path string, got []byte, opts ...Option) {
	t.Helper()
	if *update {
		write(t, path, got)
		return
	}
	want := readGolden(t, path)
	diff, err := DiffSSE(want, got, opts...)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if diff != "" {
		t.Errorf("%s differs from the golden stream (-want +got):\n%s\n%s", path, diff, hint)
	}
}

const hint = "If the new output is right, rewrite the golden files: go test ./... -update"

func readGolden(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("golden file %s is missing. %s", path, hint)
	}
	if err != nil {
		t.Fatalf("golden: %v", err)
	}
	return b
}

func write(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func indentJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, b); err != nil {
		t.Fatalf("golden: output is not JSON: %v\n%s", err, b)
	}
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// Option loosens a comparison.
type Option int

const (
	// IgnoreNullMembers treats an object member whose value is null as
	// absent. Services and SDKs read both the same way; a round trip may
	// spell one as the other.
	IgnoreNullMembers Option = iota + 1
	// SkipPings leaves keep-alive events ("ping", and SSE comments are
	// always skipped) out of a stream comparison.
	SkipPings
)

func has(opts []Option, o Option) bool {
	for _, x := range opts {
		if x == o {
			return true
		}
	}
	return false
}

// DiffJSON returns a readable diff of two JSON documents, empty when they
// are semantically equal: same values, whatever the key order, white space
// or spelling of numbers (1, 1.0 and 1e0 are equal).
func DiffJSON(want, got []byte, opts ...Option) (string, error) {
	w, err := decodeJSON(want)
	if err != nil {
		return "", fmt.Errorf("golden file is not JSON: %w", err)
	}
	g, err := decodeJSON(got)
	if err != nil {
		return "", fmt.Errorf("output is not JSON: %w\n%s", err, got)
	}
	if has(opts, IgnoreNullMembers) {
		w, g = dropNulls(w), dropNulls(g)
	}
	return cmp.Diff(w, g, numberEqual), nil
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if x == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(x)
		}
	case []any:
		for i := range t {
			t[i] = dropNulls(t[i])
		}
	}
	return v
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

var numberEqual = cmp.Comparer(func(a, b json.Number) bool {
	if a == b {
		return true
	}
	x, _, errA := big.ParseFloat(string(a), 10, 256, big.ToNearestEven)
	y, _, errB := big.ParseFloat(string(b), 10, 256, big.ToNearestEven)
	return errA == nil && errB == nil && x.Cmp(y) == 0
})

// streamEvent is an SSE event with its data decoded when it is JSON.
type streamEvent struct {
	Type string
	Data any
}

// DiffSSE returns a readable diff of two event streams, empty when they
// hold the same events with semantically equal data.
func DiffSSE(want, got []byte, opts ...Option) (string, error) {
	w, err := decodeSSE(want, opts)
	if err != nil {
		return "", fmt.Errorf("golden stream: %w", err)
	}
	g, err := decodeSSE(got, opts)
	if err != nil {
		return "", fmt.Errorf("output stream: %w", err)
	}
	return cmp.Diff(w, g, numberEqual), nil
}

func decodeSSE(b []byte, opts []Option) ([]streamEvent, error) {
	r := sse.NewReader(bytes.NewReader(b), 0)
	var out []streamEvent
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if has(opts, SkipPings) && ev.Type == "ping" {
			continue
		}
		var data any = string(ev.Data)
		if v, err := decodeJSON(ev.Data); err == nil {
			if has(opts, IgnoreNullMembers) {
				v = dropNulls(v)
			}
			data = v
		}
		out = append(out, streamEvent{Type: ev.Type, Data: data})
	}
}

// Headers reads the case's request.headers.json (a JSON object of header
// name to values); a case without one has no headers.
func (c Case) Headers(t testing.TB) http.Header {
	t.Helper()
	h := http.Header{}
	if !c.Exists("request.headers.json") {
		return h
	}
	var m map[string][]string
	if err := json.Unmarshal(c.Read(t, "request.headers.json"), &m); err != nil {
		t.Fatalf("case %s: request.headers.json: %v", c.Name, err)
	}
	for k, vs := range m {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	return h
}

// Messages compares a list of proto messages, as a JSON array of their
// protojson forms, with the golden file at path: a decoded stream's
// canonical events, say.
func Messages[M proto.Message](t testing.TB, path string, msgs []M) {
	t.Helper()
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range msgs {
		if i > 0 {
			b.WriteByte(',')
		}
		j, err := protojson.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
	}
	b.WriteByte(']')
	JSON(t, path, b.Bytes())
}
