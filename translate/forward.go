package translate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

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
// names repeat is refused, so that no second "model" can stand behind the
// one Parley checked and replaced (the dialects' decoders let the last of
// repeated names win, as their services do).
func SetModel(body []byte, model string) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, errors.New("the request body is not a JSON object")
	}
	start, end := -1, -1
	same := false
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		if name.String() != "model" {
			if err := dec.SkipValue(); err != nil {
				return nil, err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		end = int(dec.InputOffset())
		start = end - len(v)
		if v.Kind() == '"' {
			s, err := strconv.Unquote(string(v))
			same = err == nil && s == model
		}
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("the request body holds more than one JSON value")
	}
	switch {
	case start < 0:
		return nil, fmt.Errorf("the request body has no model")
	case same:
		return body, nil
	}
	quoted, err := jsontext.AppendQuote(nil, model)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)-(end-start)+len(quoted))
	out = append(append(append(out, body[:start]...), quoted...), body[end:]...)
	return out, nil
}
