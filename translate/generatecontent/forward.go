package generatecontent

import (
	"bytes"
	"reflect"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/internal/jsonx"
)

// The same-dialect fast path reads more of a body than the other
// dialects' do. This dialect's clients may spell a member in snake_case or
// in any case, give contents, parts and tools as a single object, and
// write some enum words in lower case; Parley reads them all and writes
// camelCase, arrays and upper case. A body goes on as it came only when it
// is already in that written form, so that the upstream gets what Parley
// would have written: written checks it, without reflection, in one pass
// over the body.

// written reports whether a request body is in the form the encoder
// writes: every member this dialect models named as it is written, lists
// as arrays, enum words in upper case. Members it does not model go on as
// they came either way. A body it cannot follow (a name spelled with
// escapes, a member given twice) is not.
func written(body []byte) bool {
	w := forwardWalkers.Get().(*jsonx.Walker)
	defer func() {
		w.Release()
		forwardWalkers.Put(w)
	}()
	w.Reset(body)
	_, err := writtenValue(w, "", "", false)
	return err == nil && w.End()
}

var forwardWalkers = sync.Pool{New: func() any { return new(jsonx.Walker) }}

// writtenValue walks the value of a member named name ("" for the body)
// of an object that is the value of in, or an element of its list (elem),
// failing with ErrForm at the first thing the encoder would write
// otherwise. set is false for an empty string or list, which the encoder
// leaves out or writes, the same to a service (proto3's defaults).
func writtenValue(w *jsonx.Walker, name, in string, elem bool) (set bool, err error) {
	switch w.Kind() {
	case '{':
		if singular[name] && !elem {
			return false, jsonx.ErrForm // a list given as its one element
		}
		n, typed, kind, parts := 0, false, false, false
		err := w.Object(func(member []byte) error {
			if !writtenName(member) {
				return jsonx.ErrForm
			}
			kind = kind || partKinds[string(member)]
			switch {
			case freeForm[string(member)]:
				n++
				if w.Kind() != '{' {
					// Arguments, a response or a schema that is not an
					// object: the encoder wraps or refuses it.
					return jsonx.ErrForm
				}
				return w.Skip()
			case schemaMembers[string(member)]:
				n++
				return writtenSchema(w)
			}
			// The modelled name as a constant (an unknown member's is
			// looked up by nothing): no copy of the name per member.
			set, err := writtenValue(w, modelled[string(member)], name, false)
			if set {
				n++
				typed = typed || string(member) == "mimeType"
				parts = parts || string(member) == "parts"
			}
			return err
		})
		switch {
		case err != nil:
			return false, err
		case n == 0 && in != "tools" && name != "generationConfig":
			// An object with nothing set is left out, but for a built-in
			// tool's settings; an empty generationConfig (which the SDKs
			// write) is the same to a service as none.
			return false, jsonx.ErrForm
		case (name == "systemInstruction" || name == "contents") && !parts:
			// A turn or instruction with no parts is left out, with any
			// member it has.
			return false, jsonx.ErrForm
		case name == "parts" && !kind:
			// A part of no kind Parley reads is left out.
			return false, jsonx.ErrForm
		case media[name] && !typed:
			// A medium's type is told from its name when not given.
			return false, jsonx.ErrForm
		}
		return true, nil
	case '[':
		n := 0
		_, err := w.Array(func() error {
			n++
			_, err := writtenValue(w, name, in, true)
			return err
		})
		return n > 0, err
	case '"':
		// Read in place: a conversation's texts are not copied.
		raw, err := w.Raw()
		if err != nil || upperWords[name] && !upperWord(raw) || name == "data" && media[in] && !stdBase64(raw) {
			return false, jsonx.ErrForm
		}
		return len(raw) > 2, nil
	}
	return true, w.Skip()
}

// stdBase64 reports whether a string, as written in JSON, is base64 as the
// encoder writes it: the standard alphabet, padded, without line breaks,
// escapes or stray bits past the last byte. The decoder also reads the
// URL-safe alphabet, no padding and set trailing bits, which the encoder
// writes otherwise.
func stdBase64(raw []byte) bool {
	s := raw[1 : len(raw)-1]
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	for pad < 2 && len(s) > pad && s[len(s)-1-pad] == '=' {
		pad++
	}
	body := s[:len(s)-pad]
	for _, c := range body {
		if base64Digit[c] == 0 {
			return false
		}
	}
	if pad == 0 || len(body) == 0 {
		return pad == 0
	}
	// One pad leaves two bits of the last digit unused; two leave four.
	unused := byte(1)<<(2*pad) - 1
	return (base64Digit[body[len(body)-1]]-1)&unused == 0
}

// base64Digit holds one more than the value of each digit of the standard
// alphabet, and 0 for every other byte.
var base64Digit = func() (t [256]byte) {
	for i, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/" {
		t[c] = byte(i) + 1
	}
	return t
}()

// writtenSchema walks a schema in the Schema form, failing with ErrForm
// unless it is as the encoder writes it back from the JSON Schema it is
// read as: upper-case types, only the keywords the service takes (which
// the encoder keeps), a format it keeps, an enum only of a string, and
// no form the conversion rewrites (a one-member anyOf, a null type).
func writtenSchema(w *jsonx.Walker) error {
	str, enum, alts := false, false, -1
	err := w.Object(func(name []byte) error {
		switch k := string(name); k {
		case "type":
			s, ok := plainWord(w)
			if !ok || !schemaTypes[string(s)] {
				return jsonx.ErrForm
			}
			str = string(s) == "STRING"
			return nil
		case "format":
			s, ok := plainWord(w)
			if !ok || !keptFormats[string(s)] {
				return jsonx.ErrForm
			}
			return nil
		case "nullable":
			if w.Kind() != 't' {
				return jsonx.ErrForm // false is left out
			}
			return w.Skip()
		case "enum":
			enum = true
			_, err := w.Array(func() error {
				if w.Kind() != '"' {
					return jsonx.ErrForm
				}
				return w.SkipString()
			})
			return err
		case "properties":
			return w.Object(func([]byte) error { return writtenSchema(w) })
		case "items":
			return writtenSchema(w)
		case "anyOf":
			alts = 0
			_, err := w.Array(func() error {
				alts++
				return writtenSchema(w)
			})
			return err
		default:
			if !keptKeywords[k] {
				return jsonx.ErrForm
			}
			return w.Skip()
		}
	})
	switch {
	case err != nil:
		return err
	case enum && !str, alts >= 0 && alts < 2:
		return jsonx.ErrForm
	}
	return nil
}

// plainWord reads a string without escapes in place, returning what is
// between its quotes.
func plainWord(w *jsonx.Walker) ([]byte, bool) {
	if w.Kind() != '"' {
		return nil, false
	}
	raw, err := w.Raw()
	if err != nil || bytes.IndexByte(raw, '\\') >= 0 {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// schemaTypes are the types of the Schema form the conversions keep.
var schemaTypes = map[string]bool{"STRING": true, "NUMBER": true, "INTEGER": true, "BOOLEAN": true, "ARRAY": true, "OBJECT": true}

// upperWord reports whether a string, as written in JSON, is a word in
// upper case: no lower-case letter, escape or other than ASCII.
func upperWord(raw []byte) bool {
	for _, c := range raw {
		if 'a' <= c && c <= 'z' || c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// writtenName reports whether a member's name is as the encoder writes
// it: a modelled member's camelCase name, or a name this dialect does not
// model in any spelling (kept as it came).
func writtenName(name []byte) bool {
	if len(name) > 0 && name[0] == '@' {
		return false // the names of Parley's own marks, never kept
	}
	if spelled, ok := modelled[string(name)]; ok {
		return spelled == string(name)
	}
	_, respelled := modelled[foldName(name)]
	return !respelled
}

// foldName is a name as the decoder matches it: lower case, without
// underscores.
func foldName(name []byte) string {
	return strings.ToLower(string(bytes.ReplaceAll(name, []byte("_"), nil)))
}

var (
	// singular are the lists a client may give as a single object.
	singular = map[string]bool{"contents": true, "parts": true, "tools": true}
	// freeForm are members whose values are the client's own (a call's
	// arguments, a function's response, a schema given as JSON Schema),
	// kept as they came.
	freeForm = map[string]bool{"args": true, "response": true, "parametersJsonSchema": true, "responseJsonSchema": true}
	// partKinds are the members that say what a part is.
	partKinds = map[string]bool{
		"text": true, "inlineData": true, "fileData": true, "functionCall": true, "functionResponse": true,
		"executableCode": true, "codeExecutionResult": true,
	}
	// media are the parts that name a medium's type.
	media = map[string]bool{"inlineData": true, "fileData": true}
	// schemaMembers are members that hold a schema in the Schema form.
	schemaMembers = map[string]bool{"parameters": true, "responseSchema": true}
	// upperWords are members whose enum words are read in any case and
	// written in upper case (or kept only when they are): a schema's
	// type, an answer's modalities and media resolution, and the words a
	// same-dialect request keeps only as given in upper case.
	upperWords = map[string]bool{
		"type": true, "responseModalities": true, "mediaResolution": true, "language": true, "mode": true,
		"category": true, "threshold": true, "thinkingLevel": true, "behavior": true, "scheduling": true,
	}
	// modelled maps every member name of the request's wire types, and its
	// folded spelling, to itself.
	modelled = modelledNames(reflect.TypeFor[Request]())
)

// modelledNames lists the JSON member names of t and of every type it
// holds, each under its own spelling and its folded one.
func modelledNames(t reflect.Type) map[string]string {
	names := map[string]string{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[jsontext.Value]() {
			return
		}
		seen[t] = true
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name != "" && name != "-" {
				names[name] = name
				names[foldName([]byte(name))] = name
			}
			walk(f.Type)
		}
	}
	walk(t)
	return names
}
