// Package jsonx holds the JSON plumbing every dialect shares: decoding with
// the same options everywhere, turning decode errors into field paths, and
// keeping the members a dialect's wire types do not model in the canonical
// extension bag, so that a dialect's round trip into itself loses nothing.
//
// Wire types use github.com/go-json-experiment/json, the module form of
// encoding/json/v2: it needs no GOEXPERIMENT, matches snake_case and
// camelCase spellings with one "case:ignore" tag, captures unknown members
// in an "embed" fallback, and decodes faster than encoding/json.
package jsonx

import (
	"bytes"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// Unknown holds the members of a JSON object that its Go type does not
// model, by name, as raw JSON.
type Unknown = map[string]jsontext.Value

// decodeOptions are used for every wire body. Duplicate names are allowed
// (the last wins) as the services the dialects come from allow them;
// invalid UTF-8 is rejected, as they reject it.
var decodeOptions = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
)

// Unmarshal decodes a wire body.
func Unmarshal(b []byte, v any) error {
	return json.Unmarshal(b, v, decodeOptions)
}

// allowDuplicates validates a raw value as decodeOptions read it.
var allowDuplicates = jsontext.AllowDuplicateNames(true)

// IsObject reports whether s is one JSON object as Unmarshal reads a wire
// body: a repeated name is allowed (the last wins). A tool call's
// arguments or a tool's result that a client sent as an object must be
// seen as one when it goes on to another dialect, as it is when it is
// forwarded as it came. Text that does not start with a brace is not
// validated at all.
func IsObject(s string) bool {
	v := jsontext.Value(s)
	return v.Kind() == '{' && v.IsValid(allowDuplicates)
}

// encodeOptions let raw values that were accepted on input (duplicate
// names included) go back out as they came, and write the members of Go
// maps (the Unknown members of every wire type among them) in sorted
// order: the same request must make the same bytes every time, or an
// upstream's prompt cache misses and a kept value differs between runs.
var encodeOptions = json.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	json.Deterministic(true),
)

// Marshal encodes a wire body.
func Marshal(v any) ([]byte, error) {
	return json.Marshal(v, encodeOptions)
}

// Path returns the location of a decode error as path segments (object
// member names and array indices), and a plain description of what went
// wrong.
func Path(err error) (segments []string, what string) {
	var (
		sem *json.SemanticError
		syn *jsontext.SyntacticError
	)
	switch {
	case errors.As(err, &sem):
		what = describeSemantic(sem)
		segments = slices.Collect(sem.JSONPointer.Tokens())
	case errors.As(err, &syn):
		what = "malformed JSON: " + unwrapMessage(syn.Err)
		segments = slices.Collect(syn.JSONPointer.Tokens())
	default:
		what = err.Error()
	}
	return shortPath(segments), what
}

// Bounds of a path in an error message: a body nested thousands of levels
// deep, or with a member name of a megabyte, gets a message of a few
// hundred bytes that still shows where the path starts and ends.
const (
	maxPathHead    = 8  // segments kept from the start
	maxPathTail    = 4  // and from the end
	maxSegmentSize = 64 // bytes of one segment
)

// Elided stands for the segments, or the end of a segment, left out of a
// long path.
const Elided = "…"

func shortPath(segments []string) []string {
	if len(segments) > maxPathHead+maxPathTail+1 {
		cut := make([]string, 0, maxPathHead+maxPathTail+1)
		cut = append(cut, segments[:maxPathHead]...)
		cut = append(cut, Elided)
		segments = append(cut, segments[len(segments)-maxPathTail:]...)
	}
	for i, s := range segments {
		if len(s) > maxSegmentSize {
			cut := s[:maxSegmentSize]
			for !utf8.ValidString(cut) {
				cut = cut[:len(cut)-1]
			}
			segments[i] = cut + Elided
		}
	}
	return segments
}

func unwrapMessage(err error) string {
	if err == nil {
		return "invalid"
	}
	return err.Error()
}

func describeSemantic(e *json.SemanticError) string {
	if e.Err != nil {
		var inner *json.SemanticError
		if !errors.As(e.Err, &inner) {
			msg := e.Err.Error()
			if e.JSONKind != 0 && e.GoType != nil {
				return "cannot take a JSON " + kindName(e.JSONKind) + " here: " + msg
			}
			return msg
		}
	}
	if e.JSONKind != 0 && e.GoType != nil {
		return "expected " + goKindName(e.GoType.Kind().String()) + ", got a JSON " + kindName(e.JSONKind)
	}
	return "invalid value"
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

func goKindName(k string) string {
	switch {
	case k == "string":
		return "a string"
	case k == "bool":
		return "a boolean"
	case strings.HasPrefix(k, "int"), strings.HasPrefix(k, "uint"):
		return "an integer"
	case strings.HasPrefix(k, "float"):
		return "a number"
	case k == "slice", k == "array":
		return "an array"
	case k == "struct", k == "map":
		return "an object"
	}
	return "a different type"
}

// DottedPath spells segments the way the messages and chat dialects' own
// services do: messages.0.content.1.source.
func DottedPath(segments []string) string { return strings.Join(segments, ".") }

// BracketPath spells segments in the style of Google APIs and JavaScript:
// contents[0].parts[1].text.
func BracketPath(segments []string) string {
	var b strings.Builder
	for _, s := range segments {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	return b.String()
}

// sep joins the levels of an extension key: "thinking/display" is the
// display member of the thinking object of the message holding the bag.
const sep = "/"

// Keep stores the unknown members u in *ext under prefix (empty for the
// object that owns the bag, or a nested member's name). It creates the bag
// when needed.
func Keep(ext **parleyv1.Extensions, d parleyv1.Dialect, prefix string, u Unknown) {
	if len(u) == 0 {
		return
	}
	fields := bag(ext, d, len(u))
	for k, v := range u {
		fields[key(prefix, k)] = string(v)
	}
}

// bag returns the fields of *ext to write to, made (with room for n) when
// there are none, and copied first when they are a flag's shared bag.
func bag(ext **parleyv1.Extensions, d parleyv1.Dialect, n int) map[string]string {
	if src := *ext; isShared(src) {
		// A flag's shared bag is never written: a copy of its one or two
		// fields, made directly (a reflective clone cost a few times
		// more, for every message of a conversation marked so).
		fields := make(map[string]string, len(src.Fields)+n)
		maps.Copy(fields, src.Fields)
		*ext = &parleyv1.Extensions{Dialect: src.Dialect, Fields: fields}
	}
	if *ext == nil {
		*ext = &parleyv1.Extensions{Dialect: d, Fields: make(map[string]string, n)}
	}
	if (*ext).Fields == nil {
		(*ext).Fields = make(map[string]string, n)
	}
	return (*ext).Fields
}

// KeepFlag marks *ext with name set to true. A value that holds no other
// member shares one bag per dialect and name with every value so marked,
// rather than a bag of its own: a request of 200,000 messages whose
// content was each a string holds one bag, not 200,000. Keep copies a
// shared bag before it writes to it; nothing else may write to a bag.
func KeepFlag(ext **parleyv1.Extensions, d parleyv1.Dialect, name string) {
	if *ext != nil {
		KeepValue(ext, d, name, jsontext.Value("true"))
		return
	}
	k := flagKey{d, name}
	if b, ok := flags.Load(k); ok {
		*ext = b.(*parleyv1.Extensions)
		return
	}
	b := &parleyv1.Extensions{Dialect: d, Fields: map[string]string{name: "true"}}
	shared.Store(b, true)
	got, _ := flags.LoadOrStore(k, b)
	*ext = got.(*parleyv1.Extensions)
}

type flagKey struct {
	d    parleyv1.Dialect
	name string
}

// flags holds the shared bag of each flag; shared, every such bag.
var flags, shared sync.Map

func isShared(b *parleyv1.Extensions) bool {
	if b == nil {
		return false
	}
	_, ok := shared.Load(b)
	return ok
}

// KeepValue stores one raw value under name.
// It writes the value in place: a one-member Unknown made for it was a
// map on the caller's stack, several hundred bytes at every call site
// the compiler inlined it into.
func KeepValue(ext **parleyv1.Extensions, d parleyv1.Dialect, name string, v jsontext.Value) {
	bag(ext, d, 1)[name] = string(v)
}

// KeepValues stores each of values that is not empty under the name of
// the same index, all of them in one string: a response's echo of its
// request is a dozen small values, a string each when kept one by one.
func KeepValues(ext **parleyv1.Extensions, d parleyv1.Dialect, names []string, values []jsontext.Value) {
	n, size := 0, 0
	for _, v := range values {
		if len(v) > 0 {
			n++
			size += len(v)
		}
	}
	if n == 0 {
		return
	}
	var b strings.Builder
	b.Grow(size)
	for _, v := range values {
		b.Write(v)
	}
	all := b.String()
	fields := bag(ext, d, n)
	for i, v := range values {
		if len(v) > 0 {
			fields[names[i]], all = all[:len(v)], all[len(v):]
		}
	}
}

func key(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + sep + name
}

// Take returns the members stored under prefix, when ext belongs to d;
// nothing otherwise, since a bag is only ever read by its own dialect.
func Take(ext *parleyv1.Extensions, d parleyv1.Dialect, prefix string) Unknown {
	if ext == nil || ext.GetDialect() != d || len(ext.GetFields()) == 0 {
		return nil
	}
	var out Unknown
	for k, v := range ext.GetFields() {
		if IsMark(k) {
			continue // a spelling note, not a wire member
		}
		name, ok := under(k, prefix)
		if !ok {
			continue
		}
		if out == nil {
			out = make(Unknown)
		}
		out[name] = jsontext.Value(v)
	}
	return out
}

// Has reports whether ext belongs to d and holds name.
func Has(ext *parleyv1.Extensions, d parleyv1.Dialect, name string) bool {
	_, ok := Value(ext, d, name)
	return ok
}

// Value returns the raw value stored under name, if any.
func Value(ext *parleyv1.Extensions, d parleyv1.Dialect, name string) (jsontext.Value, bool) {
	if ext == nil || ext.GetDialect() != d {
		return nil, false
	}
	v, ok := ext.GetFields()[name]
	return jsontext.Value(v), ok
}

func under(k, prefix string) (string, bool) {
	if prefix == "" {
		if strings.Contains(k, sep) {
			return "", false
		}
		return k, true
	}
	rest, ok := strings.CutPrefix(k, prefix+sep)
	if !ok || strings.Contains(rest, sep) {
		return "", false
	}
	return rest, true
}

// ReadStringOrArray reads a member that is either a JSON string or an
// array of T, as several dialects allow for content and stop sequences.
// what names the member in the error for any other kind.
func ReadStringOrArray[T any](dec *jsontext.Decoder, what string) (s string, list []T, isString bool, err error) {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return "", nil, false, err
		}
		return tok.String(), nil, true, nil
	case '[':
		if err := json.UnmarshalDecode(dec, &list); err != nil {
			return "", nil, false, err
		}
		if list == nil {
			list = []T{}
		}
		return "", list, false, nil
	}
	return "", nil, false, errors.New(what + " must be a string or an array")
}

// WriteStringOrArray writes s when isString, else list (never null).
func WriteStringOrArray[T any](enc *jsontext.Encoder, isString bool, s string, list []T) error {
	if isString {
		return enc.WriteToken(jsontext.String(s))
	}
	if list == nil {
		list = []T{}
	}
	return json.MarshalEncode(enc, list)
}

// ReadStringOrObject reads a member that is either a mode string or an
// object of type T (a tool choice, say); the string is returned, the
// object decoded into obj.
func ReadStringOrObject[T any](dec *jsontext.Decoder, obj *T, what string) (string, error) {
	switch dec.PeekKind() {
	case '"':
		tok, err := dec.ReadToken()
		if err != nil {
			return "", err
		}
		return tok.String(), nil
	case '{':
		return "", json.UnmarshalDecode(dec, obj)
	}
	return "", errors.New(what + " must be a string or an object")
}

// Unquote is the text of a JSON string token, read as a Walker reads a
// string (its plain runs eight bytes at a time, its one-letter escapes by
// hand), else as jsontext unquotes it. ok is false for a token that is
// not a valid JSON string (FuzzUnquote holds it to jsontext).
func Unquote(tok []byte) (string, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return "", false
	}
	// As a Walker reads a string, its text written on the stack when it
	// has escapes (a delta with a line break).
	if end, escaped, ok := scanString(tok, 1); ok && end == len(tok)-1 {
		inner := tok[1:end]
		if !escaped {
			return string(inner), true
		}
		if len(inner) <= shortText {
			if text, ok := unquoteShort(inner); ok {
				return text, true
			}
		} else if text, ok := appendUnquote(nil, inner); ok {
			return string(text), true
		}
	}
	text, err := jsontext.AppendUnquote(nil, tok)
	return string(text), err == nil
}

// shortText is the longest escaped text Unquote writes on the stack.
const shortText = 256

// unquoteShort unquotes a short text on the stack. It has a frame of its
// own, so that its buffer takes no room on the stack of Unquote's callers
// when the text is long: AppendRaw, writing a tool's schema at the end of
// a responses stream, runs deep (TestStreamsRunOnSmallStacks).
//
//go:noinline
func unquoteShort(inner []byte) (string, bool) {
	var buf [shortText]byte
	text, ok := appendUnquote(buf[:0], inner)
	return string(text), ok
}

// Hole cuts a marshalled value around a placeholder, for writers that
// marshal a shape once and then fill in one member by hand: lead+hole must
// occur exactly once in whole; before ends with lead, after starts right
// after hole.
func Hole(whole []byte, lead, hole string) (before, after []byte, ok bool) {
	mark := []byte(lead + hole)
	i := bytes.Index(whole, mark)
	if i < 0 || bytes.Count(whole, mark) != 1 {
		return nil, nil, false
	}
	cut := i + len(lead)
	return whole[:cut], whole[cut+len(hole):], true
}
