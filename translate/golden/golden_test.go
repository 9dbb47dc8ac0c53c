package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	msgs  []string
	fatal bool
}

type stop struct{}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.msgs = append(r.msgs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	r.fatal = true
	panic(stop{})
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }
func (r *recorder) failed() bool      { return len(r.msgs) > 0 }
func (r *recorder) text() string      { return strings.Join(r.msgs, "\n") }

func record(t *testing.T, fn func(tb testing.TB)) *recorder {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(stop); !ok {
					panic(v)
				}
			}
		}()
		fn(r)
	}()
	return r
}

func withUpdate(t *testing.T) {
	old := *update
	*update = true
	t.Cleanup(func() { *update = old })
}

func TestDiffJSONIsSemantic(t *testing.T) {
	equal := [][2]string{
		{`{"a":1,"b":[1,2]}`, "{\n  \"b\": [1, 2],\n  \"a\": 1\n}"},
		{`{"n":1}`, `{"n":1.0}`},
		{`{"n":100}`, `{"n":1e2}`},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567890}`},
	}
	for _, c := range equal {
		diff, err := DiffJSON([]byte(c[0]), []byte(c[1]))
		if err != nil || diff != "" {
			t.Errorf("%s vs %s: diff %q, error %v; want equal", c[0], c[1], diff, err)
		}
	}
	unequal := [][2]string{
		{`{"a":1}`, `{"a":2}`},
		{`{"a":1}`, `{"a":"1"}`},
		{`{"n":12345678901234567890}`, `{"n":12345678901234567891}`},
		{`{"a":[1,2]}`, `{"a":[2,1]}`},
		{`{"a":null}`, `{}`},
	}
	for _, c := range unequal {
		diff, err := DiffJSON([]byte(c[0]), []byte(c[1]))
		if err != nil || diff == "" {
			t.Errorf("%s vs %s: no diff (error %v); want a difference", c[0], c[1], err)
		}
	}
	if _, err := DiffJSON([]byte(`{}`), []byte(`{} {}`)); err == nil {
		t.Error("trailing data was accepted")
	}
}

func TestJSONReportsDiffAndHowToUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte(`{"type":"message","id":"msg_1"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := record(t, func(tb testing.TB) { JSON(tb, path, []byte(`{"id":"msg_1","type":"message"}`)) })
	if r.failed() {
		t.Fatalf("equal documents failed: %s", r.text())
	}
	r = record(t, func(tb testing.TB) { JSON(tb, path, []byte(`{"id":"msg_2","type":"message"}`)) })
	if !r.failed() {
		t.Fatal("a changed value passed")
	}
	for _, want := range []string{"msg_1", "msg_2", "-update", path} {
		if !strings.Contains(r.text(), want) {
			t.Errorf("failure message lacks %q:\n%s", want, r.text())
		}
	}
}

func TestMissingGoldenFileSaysHowToCreateIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "absent.json")
	r := record(t, func(tb testing.TB) { JSON(tb, path, []byte(`{}`)) })
	if !r.fatal || !strings.Contains(r.text(), "-update") {
		t.Fatalf("missing file: fatal=%v, %q", r.fatal, r.text())
	}
}

func TestUpdateWritesStableIndentedJSON(t *testing.T) {
	withUpdate(t)
	path := filepath.Join(t.TempDir(), "sub", "out.json")
	msg := &parleyv1.Error{Code: parleyv1.Code_CODE_NOT_FOUND, Message: "no such model"}
	Proto(t, path, msg)
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	Proto(t, path, msg)
	second, _ := os.ReadFile(path)
	if string(first) != string(second) {
		t.Fatalf("rewrites differ:\n%s\n%s", first, second)
	}
	want := "{\n  \"code\": \"CODE_NOT_FOUND\",\n  \"message\": \"no such model\"\n}\n"
	if string(first) != want {
		t.Fatalf("wrote %q, want %q", first, want)
	}
	*update = false
	var back parleyv1.Error
	ReadProto(t, path, &back)
	if back.GetMessage() != "no such model" {
		t.Fatalf("read back %v", &back)
	}
	if r := record(t, func(tb testing.TB) { Proto(tb, path, msg) }); r.failed() {
		t.Fatalf("compare after update failed: %s", r.text())
	}
}

func TestSSECompareIsPerEventAndSemantic(t *testing.T) {
	want := "event: a\ndata: {\"x\":1,\"y\":2}\n\ndata: [DONE]\n\n"
	same := "event: a\r\ndata: {\"y\":2, \"x\":1.0}\r\n\r\ndata: [DONE]\r\n\r\n"
	if diff, err := DiffSSE([]byte(want), []byte(same)); err != nil || diff != "" {
		t.Fatalf("equal streams differ: %q %v", diff, err)
	}
	for _, other := range []string{
		"event: b\ndata: {\"x\":1,\"y\":2}\n\ndata: [DONE]\n\n",
		"event: a\ndata: {\"x\":1,\"y\":3}\n\ndata: [DONE]\n\n",
		"event: a\ndata: {\"x\":1,\"y\":2}\n\n",
	} {
		if diff, err := DiffSSE([]byte(want), []byte(other)); err != nil || diff == "" {
			t.Errorf("stream %q compared equal (error %v)", other, err)
		}
	}
	if _, err := DiffSSE([]byte(want), []byte("data: cut")); err == nil {
		t.Error("a truncated stream was accepted")
	}
}

func TestCasesAreSortedAndNeverEmpty(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"b_case", "a_case"} {
		if err := os.Mkdir(filepath.Join(dir, n), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := Cases(t, dir)
	if len(cases) != 2 || cases[0].Name != "a_case" || cases[1].Name != "b_case" {
		t.Fatalf("cases = %+v", cases)
	}
	r := record(t, func(tb testing.TB) { Cases(tb, t.TempDir()) })
	if !r.fatal {
		t.Fatal("an empty case folder passed")
	}
}

func TestMetaNeedsASource(t *testing.T) {
	c := Case{Name: "x", Dir: t.TempDir()}
	if err := os.WriteFile(c.Path("case.json"), []byte(`{"description":"d"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := record(t, func(tb testing.TB) { c.Meta(tb) }); !r.fatal {
		t.Fatal("a case without a source passed")
	}
	if err := os.WriteFile(c.Path("case.json"), []byte(`{"source":"s","extra":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := record(t, func(tb testing.TB) { c.Meta(tb) }); !r.fatal {
		t.Fatal("an unknown key in case.json passed")
	}
}

type wireSample struct {
	Model    string          `json:"model"`
	MaxToken int             `json:"max_tokens"`
	System   string          `json:"system,omitempty"`
	Messages []wireSampleMsg `json:"messages"`
}

type wireSampleMsg struct {
	Role    string `json:"role" jsonschema:"enum=user,enum=assistant"`
	Content string `json:"content"`
}

func TestSchemaValidatesWireInputs(t *testing.T) {
	withUpdate(t)
	v := CheckSchema(t, filepath.Join(t.TempDir(), "schema.json"), wireSample{}, nil)
	ok := `{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`
	if err := v.Validate([]byte(ok)); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	for _, bad := range []string{
		`{"model":"m","messages":[]}`,                                         // max_tokens missing
		`{"model":"m","max_tokens":5,"messages":[{"role":"x","content":""}]}`, // enum
		`{"model":1,"max_tokens":5,"messages":[]}`,                            // type
	} {
		if err := v.Validate([]byte(bad)); err == nil {
			t.Errorf("invalid input accepted: %s", bad)
		}
	}
}
