package cloud

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/go-json-experiment/json/jsontext"
)

// member is a top-level member added to a body.
type member struct {
	name  string
	value jsontext.Value
}

// editBody rewrites the JSON object body: the members named in drop are
// left out, those in add are appended (replacing any of the same name),
// and the rest are kept as they are, in order.
func editBody(body []byte, drop []string, add ...member) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	var out bytes.Buffer
	out.Grow(len(body) + 64)
	enc := jsontext.NewEncoder(&out)
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	if tok.Kind() != '{' {
		return nil, fmt.Errorf("the request body is not a JSON object")
	}
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return nil, err
	}
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		n := name.String()
		val, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		if slices.Contains(drop, n) || slices.ContainsFunc(add, func(m member) bool { return m.name == n }) {
			continue
		}
		if err := enc.WriteToken(jsontext.String(n)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(val); err != nil {
			return nil, err
		}
	}
	for _, m := range add {
		if err := enc.WriteToken(jsontext.String(m.name)); err != nil {
			return nil, err
		}
		if err := enc.WriteValue(m.value); err != nil {
			return nil, err
		}
	}
	if err := enc.WriteToken(jsontext.EndObject); err != nil {
		return nil, err
	}
	return bytes.TrimRight(out.Bytes(), "\n"), nil
}

// member of a body, or nil.
func bodyMember(body []byte, name string) jsontext.Value {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil
	}
	for dec.PeekKind() != '}' {
		n, err := dec.ReadToken()
		if err != nil {
			return nil
		}
		isName := n.String() == name
		v, err := dec.ReadValue()
		if err != nil {
			return nil
		}
		if isName {
			return v.Clone()
		}
	}
	return nil
}

func stringValue(s string) jsontext.Value {
	v, _ := jsontext.AppendQuote(nil, s)
	return v
}
