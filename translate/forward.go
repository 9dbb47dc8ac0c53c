package translate

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// The same-dialect fast path. When a client and the upstream that serves
// it speak one dialect, the upstream's encoder passes the client's choices
// through, so the request it would build is, member for member, the one
// the client sent, with the upstream's model name. A Forwarder then sends
// the client's own body on with the model swapped instead of building it
// again, whenever it can tell that nothing else would have changed. The
// request is decoded all the same: it is checked, routed and counted by
// its canonical form, and the reply is decoded as on every other path.

// Source is a client's request as it came, which a Forwarder may send on.
type Source struct {
	// Dialect is the dialect the client spoke.
	Dialect parleyv1.Dialect
	// Body is the request body as read.
	Body []byte
}

// Forwarder is an upstream codec with the same-dialect fast path.
type Forwarder interface {
	// Forward builds the request for an upstream of this dialect from a
	// client request of the same dialect: req is its canonical form, src
	// the body it came as. ok is false when the request needs more than
	// its model swapped (Parley must rewrite some of it); EncodeRequest
	// builds it then.
	Forward(req *parleyv1.Request, src *Source, t Target) (out *Outgoing, ok bool, err error)
}

// ForwardBody is what every Forwarder of a dialect that names the model
// in the body checks first (Forwardable); then its body with the model
// swapped. ok is false when it cannot go on as it came.
func ForwardBody(req *parleyv1.Request, src *Source, d parleyv1.Dialect, t Target) (body []byte, ok bool) {
	if !Forwardable(req, src, d) {
		return nil, false
	}
	body, err := SetModel(src.Body, t.Model)
	return body, err == nil
}

// Forwardable reports whether a request came from a client of dialect d,
// as src, with every opaque value its own: whether its body may go on as
// it came to an upstream of d, as far as the dialect-neutral checks go.
func Forwardable(req *parleyv1.Request, src *Source, d parleyv1.Dialect) bool {
	return src != nil && src.Dialect == d && req.GetExtensions().GetDialect() == d && OwnOpaques(req, d)
}

// OwnOpaques reports whether every opaque value of a request (signatures,
// encrypted reasoning) came from a client of dialect d unsealed: made, as
// far as Parley can tell, by a service of that dialect, and so sent on as
// the client gave it. A sealed value came through another dialect and may
// have to be kept from this upstream.
func OwnOpaques(req *parleyv1.Request, d parleyv1.Dialect) bool {
	own := func(op *parleyv1.Opaque) bool {
		o := op.GetOrigin()
		return op == nil || o.GetUpstream() == "" && (o.GetDialect() == d || o.GetDialect() == parleyv1.Dialect_DIALECT_UNSPECIFIED)
	}
	var parts func(ps []*parleyv1.Part) bool
	parts = func(ps []*parleyv1.Part) bool {
		for _, p := range ps {
			if !own(p.GetSignature()) || !own(p.GetReasoning().GetEncryptedContent()) {
				return false
			}
			if tr := p.GetToolResult(); tr != nil && !parts(tr.GetContent()) {
				return false
			}
		}
		return true
	}
	for _, m := range req.GetMessages() {
		if !parts(m.GetParts()) {
			return false
		}
	}
	return parts(req.GetInstructions())
}

// SetModel returns body, a JSON object, with its top-level "model" member
// set to model: body itself when it already says so, else a copy with
// that one value replaced and every other byte as it was. A body whose
// top-level "model" appears more than once is refused, so that no second
// model can stand behind the one Parley checked (the dialects' decoders
// let the last of repeated names win, as their services do). The body is
// one a decoder has accepted; SetModel only finds its way through it, and
// refuses what it cannot follow.
func SetModel(body []byte, model string) ([]byte, error) {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, errors.New("the request body is not a JSON object")
	}
	start, end, seen := -1, -1, 0
	i = skipSpace(body, i+1)
	for i < len(body) && body[i] != '}' {
		if body[i] != '"' {
			return nil, fmt.Errorf("no member name at offset %d", i)
		}
		keyEnd, err := stringEnd(body, i)
		if err != nil {
			return nil, err
		}
		isModel, err := namesModel(body[i:keyEnd])
		if err != nil {
			return nil, err
		}
		i = skipSpace(body, keyEnd)
		if i >= len(body) || body[i] != ':' {
			return nil, fmt.Errorf("no colon after a member name at offset %d", i)
		}
		i = skipSpace(body, i+1)
		vEnd, err := valueEnd(body, i)
		if err != nil {
			return nil, err
		}
		if isModel {
			seen++
			start, end = i, vEnd
		}
		i = skipSpace(body, vEnd)
		if i < len(body) && body[i] == ',' {
			i = skipSpace(body, i+1)
		} else if i < len(body) && body[i] != '}' {
			return nil, fmt.Errorf("unexpected %q at offset %d", body[i], i)
		}
	}
	if i >= len(body) {
		return nil, io.ErrUnexpectedEOF
	}
	switch {
	case seen == 0:
		return nil, errors.New("the request body has no model")
	case seen > 1:
		return nil, errors.New("the request body names its model more than once")
	}
	quoted, err := jsontext.AppendQuote(make([]byte, 0, len(model)+2), model)
	if err != nil {
		return nil, err
	}
	if bytes.Equal(body[start:end], quoted) {
		return body, nil
	}
	out := make([]byte, 0, len(body)-(end-start)+len(quoted))
	out = append(append(append(out, body[:start]...), quoted...), body[end:]...)
	return out, nil
}

// namesModel reports whether a quoted member name is "model", escapes
// read as a decoder reads them.
func namesModel(name []byte) (bool, error) {
	if bytes.IndexByte(name, '\\') < 0 {
		return string(name) == `"model"`, nil
	}
	var s string
	if err := json.Unmarshal(name, &s); err != nil {
		return false, err
	}
	return s == "model", nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the offset after the string that starts at b[i]: the
// first quote after it that an even number of backslashes precedes.
func stringEnd(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			break
		}
		j += k
		n := 0
		for n < j-i-1 && b[j-1-n] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j + 1, nil
		}
	}
	return 0, io.ErrUnexpectedEOF
}

// valueEnd returns the offset after the value that starts at b[i].
func valueEnd(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, io.ErrUnexpectedEOF
	}
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				e, err := stringEnd(b, j)
				if err != nil {
					return 0, err
				}
				j = e - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, io.ErrUnexpectedEOF
	}
	j := i
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	if j == i {
		return 0, fmt.Errorf("no value at offset %d", i)
	}
	return j, nil
}
