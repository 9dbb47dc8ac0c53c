package jsonx_test

import (
	"math"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	_ "github.com/parleyhq/parley/translate/golden"
	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// Flags share one bag until a value gets a member of its own: then it
// gets a bag of its own, and the others keep theirs as they were.
func TestKeepFlagSharesUntilWritten(t *testing.T) {
	const d = parleyv1.Dialect_DIALECT_MESSAGES
	var a, b *parleyv1.Extensions
	jsonx.KeepFlag(&a, d, "@string")
	jsonx.KeepFlag(&b, d, "@string")
	if a != b || a.GetFields()["@string"] != "true" || a.GetDialect() != d {
		t.Fatalf("two flagged values: %v %v", a, b)
	}
	jsonx.Keep(&b, d, "", jsonx.Unknown{"cache": jsontext.Value(`1`)})
	if a == b || len(a.GetFields()) != 1 || b.GetFields()["cache"] != "1" || b.GetFields()["@string"] != "true" {
		t.Fatalf("after writing one: %v %v", a, b)
	}
	jsonx.KeepFlag(&b, d, "@other")
	if len(a.GetFields()) != 1 || b.GetFields()["@other"] != "true" {
		t.Fatalf("a second flag on a written bag: %v %v", a, b)
	}
	var c *parleyv1.Extensions
	jsonx.KeepFlag(&c, d, "@string")
	if c != a {
		t.Fatalf("the shared bag changed: %v", c)
	}
}

// TestKeepValuesKeepsEachUnderItsName: every value that is not empty is
// kept under the name of its index, a shared flag's bag is copied before
// they go in, and values written over afterwards do not change what was
// kept.
func TestKeepValuesKeepsEachUnderItsName(t *testing.T) {
	const d = parleyv1.Dialect_DIALECT_RESPONSES
	var ext, flagged *parleyv1.Extensions
	jsonx.KeepFlag(&ext, d, "@flag")
	jsonx.KeepFlag(&flagged, d, "@flag")
	values := []jsontext.Value{jsontext.Value(`"Be brief."`), nil, jsontext.Value(`{"effort":"low"}`), {}, jsontext.Value(`null`)}
	jsonx.KeepValues(&ext, d, []string{"instructions", "max_output_tokens", "reasoning", "store", "user"}, values)
	for i := range values {
		for j := range values[i] {
			values[i][j] = 'x'
		}
	}
	want := map[string]string{"@flag": "true", "instructions": `"Be brief."`, "reasoning": `{"effort":"low"}`, "user": "null"}
	if got := ext.GetFields(); len(got) != len(want) || ext.GetDialect() != d {
		t.Fatalf("kept %v, want %v", ext, want)
	}
	for k, v := range want {
		if got := ext.GetFields()[k]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(flagged.GetFields()) != 1 {
		t.Errorf("the shared flag's bag was written: %v", flagged)
	}
	var none *parleyv1.Extensions
	jsonx.KeepValues(&none, d, []string{"a", "b"}, []jsontext.Value{nil, {}})
	if none != nil {
		t.Errorf("no values made a bag: %v", none)
	}
}

// TestMembersAreMarshalled: what Members writes is what Marshal writes for
// the same members, kept ones among them (several in Marshal's sorted
// order); and Kept refuses what Marshal refuses.
func TestMembersAreMarshalled(t *testing.T) {
	type inner struct {
		N       *int64        `json:"n,omitzero"`
		S       string        `json:"s"`
		Unknown jsonx.Unknown `json:",embed"`
	}
	n := int64(-42)
	for _, c := range []struct {
		v    inner
		kept bool
	}{
		{inner{S: "x"}, true},
		{inner{N: &n, S: "héllo \"q\" <&> \u2028"}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"geo": []byte(`"not_available"`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"na\"me": []byte(`1.5e-3`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"t": []byte(`true`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"z": []byte(`null`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"o": []byte(`{"a":[1,"b c",{}],"d":null}`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"o": []byte(`{ "a" : 1 }`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"o": []byte(`["\u00e9"]`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"o": []byte(`{"a":}`)}}, false},
		{inner{S: "a", Unknown: jsonx.Unknown{"e": []byte(`"\u00e9"`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"n": []byte(`01`)}}, false},
		{inner{S: "a", Unknown: jsonx.Unknown{"y": []byte(`1`), "x": []byte(`2`), "Z": []byte(`[]`), "é": []byte(`{}`)}}, true},
		{inner{S: "a", Unknown: jsonx.Unknown{"x": []byte(`1`), "y": []byte(`02`)}}, false},
	} {
		var m jsonx.Members
		b := append([]byte(nil), '{')
		b = m.Int(b, `"n":`, c.v.N)
		b, ok := m.String(b, `"s":`, c.v.S)
		if !ok {
			t.Fatalf("%+v: the string was refused", c.v)
		}
		b, ok = m.Kept(b, c.v.Unknown)
		if ok != c.kept {
			t.Errorf("%+v: Kept says %v, want %v", c.v, ok, c.kept)
			continue
		}
		if !ok {
			continue
		}
		b = append(b, '}')
		want, err := jsonx.Marshal(c.v)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != string(want) {
			t.Errorf("got %s, want %s", b, want)
		}
	}
	if _, ok := jsonx.AppendQuote(nil, "\xff"); ok {
		t.Error("invalid UTF-8 was quoted")
	}
}

// TestFloatsAreMarshalled: a number AppendFloat writes is the number
// Marshal writes; what it declines, Marshal writes with an exponent or
// refuses.
func TestFloatsAreMarshalled(t *testing.T) {
	fs := []float64{0, math.Copysign(0, -1), 0.7, 1, -1, 2, 0.1 + 0.2, 1.0 / 3, 123456789.125, 1e-6, 1.5e-6, 9.99e20, 1e20, 12345678901234567890,
		1e-7, 1e21, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Inf(-1)}
	written := 0
	for _, f := range fs {
		var m jsonx.Members
		got, ok := m.Float(nil, `"f":`, &f)
		want, err := jsonx.Marshal(struct {
			F float64 `json:"f"`
		}{f})
		if !ok {
			if err == nil && !strings.ContainsAny(string(want), "e") {
				t.Errorf("%v: declined, but Marshal writes %s", f, want)
			}
			continue
		}
		written++
		if err != nil {
			t.Errorf("%v: written as %s, which Marshal refuses: %v", f, got, err)
		} else if "{"+string(got)+"}" != string(want) {
			t.Errorf("%v: got %s, want %s", f, got, want)
		}
	}
	if written < 13 {
		t.Errorf("only %d numbers written", written)
	}
}

// TestMarshalSortsUnknownMembers: the members an Unknown keeps go out in
// sorted order every time, so the same request makes the same bytes.
func TestMarshalSortsUnknownMembers(t *testing.T) {
	type tool struct {
		Type    string        `json:"type"`
		Unknown jsonx.Unknown `json:",embed"`
	}
	v := tool{Type: "x", Unknown: jsonx.Unknown{}}
	for _, name := range []string{"yp", "Runction", "b", "a", "é", "_", "Z", "m"} {
		v.Unknown[name] = jsontext.Value(`1`)
	}
	const want = `{"type":"x","Runction":1,"Z":1,"_":1,"a":1,"b":1,"m":1,"yp":1,"é":1}`
	for range 50 {
		got, err := jsonx.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// IsObject reads an object as Unmarshal reads a wire body: a repeated
// name allowed, anything but one whole valid object refused.
func TestIsObject(t *testing.T) {
	for s, want := range map[string]bool{
		`{}`: true, ` {"a":1} `: true, `{"a":1,"a":"x"}`: true, `{"a":{"b":1,"b":2}}`: true,
		``: false, `text`: false, `[]`: false, `"{}"`: false, `{"a":1}{}`: false, `{"a":}`: false,
		"{\"a\":\"\xff\"}": false, `{"a":1`: false,
	} {
		if got := jsonx.IsObject(s); got != want {
			t.Errorf("IsObject(%q) = %v, want %v", s, got, want)
		}
	}
}
