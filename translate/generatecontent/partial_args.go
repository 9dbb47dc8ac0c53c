package generatecontent

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
)

// Streamed function-call arguments. Asked for with
// toolConfig.functionCallingConfig.streamFunctionCallArguments, Vertex AI
// streams one call over several parts: the first names the function and
// says willContinue; the ones after it have no name and carry partialArgs,
// each a value at a JSON path ("$.location", "$.stops[1].city") of the
// arguments object, a string value possibly in pieces (the piece before
// says willContinue); the call ends with a part whose functionCall does
// not say willContinue (often an empty one). Parley assembles the pieces
// and gives the call whole: its part starts when the name comes, and its
// arguments follow as one delta when the call ends, so every client
// dialect gets a call like any other. Decoded by streamDecoder.candidate
// (stream_decode.go); whole replies never hold pieces.

// partialArg is one piece of a streamed call's arguments.
type partialArg struct {
	JSONPath     string         `json:"jsonPath,case:ignore"`
	NullValue    *string        `json:"nullValue,omitzero,case:ignore"`
	NumberValue  jsontext.Value `json:"numberValue,omitzero,case:ignore"`
	StringValue  *string        `json:"stringValue,omitzero,case:ignore"`
	BoolValue    *bool          `json:"boolValue,omitzero,case:ignore"`
	WillContinue *bool          `json:"willContinue,omitzero,case:ignore"`
}

// Limits on what an upstream's paths may build: an index such as $[9999999]
// would otherwise allocate a huge array.
const (
	maxArgIndex = 4095
	maxArgDepth = 64
)

// streamingCall is a call being assembled.
type streamingCall struct {
	index int // the part's index in its candidate
	args  argNode
}

// argNode is a JSON value being assembled; objects keep their members in
// the order they came.
type argNode struct {
	kind   byte // 0 unset, 'o' object, 'a' array, 's' string, 'v' a literal (number, true, false, null)
	keys   []string
	fields map[string]*argNode
	items  []*argNode
	str    strings.Builder
	lit    string
}

// pathStep is one step of a JSON path: a member name or an array index.
type pathStep struct {
	name  string
	index int // -1 for a member
}

// parseArgPath reads the paths the service sends: $ followed by .name,
// ['name'] or ["name"], and [index] steps.
func parseArgPath(p string) ([]pathStep, error) {
	if !strings.HasPrefix(p, "$") {
		return nil, fmt.Errorf("jsonPath %q does not start with $", p)
	}
	var steps []pathStep
	for rest := p[1:]; rest != ""; {
		if len(steps) == maxArgDepth {
			return nil, fmt.Errorf("jsonPath %q is too deep", p)
		}
		switch {
		case rest[0] == '.':
			end := strings.IndexAny(rest[1:], ".[")
			if end < 0 {
				end = len(rest) - 1
			}
			if end == 0 {
				return nil, fmt.Errorf("jsonPath %q has an empty name", p)
			}
			steps = append(steps, pathStep{name: rest[1 : 1+end], index: -1})
			rest = rest[1+end:]
		case strings.HasPrefix(rest, "['") || strings.HasPrefix(rest, `["`):
			quote := rest[1]
			end := strings.IndexByte(rest[2:], quote)
			if end < 0 || !strings.HasPrefix(rest[2+end+1:], "]") {
				return nil, fmt.Errorf("jsonPath %q has an unclosed name", p)
			}
			steps = append(steps, pathStep{name: rest[2 : 2+end], index: -1})
			rest = rest[2+end+2:]
		case rest[0] == '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("jsonPath %q has an unclosed index", p)
			}
			n, err := strconv.Atoi(rest[1:end])
			if err != nil || n < 0 || n > maxArgIndex {
				return nil, fmt.Errorf("jsonPath %q has a bad index", p)
			}
			steps = append(steps, pathStep{index: n})
			rest = rest[end+1:]
		default:
			return nil, fmt.Errorf("jsonPath %q cannot be read", p)
		}
	}
	return steps, nil
}

// apply writes one piece into the arguments: a string piece extends the
// string already at its path; any other value sets it.
func (c *streamingCall) apply(a *partialArg) error {
	steps, err := parseArgPath(a.JSONPath)
	if err != nil {
		return err
	}
	n := &c.args
	if n.kind == 0 {
		n.kind = 'o'
	}
	for _, s := range steps {
		if n, err = n.child(s); err != nil {
			return fmt.Errorf("jsonPath %q: %w", a.JSONPath, err)
		}
	}
	switch {
	case a.StringValue != nil:
		if n.kind != 's' {
			*n = argNode{kind: 's'}
		}
		n.str.WriteString(*a.StringValue)
	case len(a.NumberValue) > 0:
		if a.NumberValue.Kind() != '0' {
			return fmt.Errorf("jsonPath %q: numberValue is not a number", a.JSONPath)
		}
		*n = argNode{kind: 'v', lit: string(a.NumberValue)}
	case a.BoolValue != nil:
		*n = argNode{kind: 'v', lit: strconv.FormatBool(*a.BoolValue)}
	case a.NullValue != nil:
		*n = argNode{kind: 'v', lit: "null"}
	}
	// A piece with no value only moves willContinue on.
	return nil
}

// child is the node at one step below n, made as the step needs it.
func (n *argNode) child(s pathStep) (*argNode, error) {
	if s.index < 0 {
		if n.kind == 0 {
			n.kind = 'o'
		}
		if n.kind != 'o' {
			return nil, errors.New("a member of a value that is not an object")
		}
		if n.fields == nil {
			n.fields = map[string]*argNode{}
		}
		c, ok := n.fields[s.name]
		if !ok {
			c = &argNode{}
			n.fields[s.name] = c
			n.keys = append(n.keys, s.name)
		}
		return c, nil
	}
	if n.kind == 0 {
		n.kind = 'a'
	}
	if n.kind != 'a' {
		return nil, errors.New("an item of a value that is not an array")
	}
	for len(n.items) <= s.index {
		n.items = append(n.items, &argNode{})
	}
	return n.items[s.index], nil
}

// appendJSON writes the assembled value; an item never given is null.
func (n *argNode) appendJSON(b []byte) []byte {
	switch n.kind {
	case 'o':
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = jsontext.AppendQuote(b, k)
			b = append(b, ':')
			b = n.fields[k].appendJSON(b)
		}
		return append(b, '}')
	case 'a':
		b = append(b, '[')
		for i, it := range n.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = it.appendJSON(b)
		}
		return append(b, ']')
	case 's':
		b, _ = jsontext.AppendQuote(b, n.str.String())
		return b
	case 'v':
		return append(b, n.lit...)
	}
	return append(b, "null"...)
}

// startsStreamingCall reports whether a part opens a call whose arguments
// follow in pieces.
func startsStreamingCall(w *Part) bool {
	fc := w.FunctionCall
	return fc != nil && fc.Name != "" && fc.WillContinue != nil && *fc.WillContinue
}

// continuesCall reports whether a part carries more of the call being
// assembled: a function call without a name.
func continuesCall(w *Part) bool {
	return w.FunctionCall != nil && w.FunctionCall.Name == ""
}

// streamedCall takes a part that starts a call whose arguments come in
// pieces, or carries pieces of the call being assembled.
func (cs *candStream) streamedCall(dst []*parleyv1.StreamEvent, rd responseDecoder, w *Part, ci int32) ([]*parleyv1.StreamEvent, error) {
	fc := w.FunctionCall
	if startsStreamingCall(w) {
		dst = cs.finishCall(dst, ci)
		start := *w
		named := *fc
		named.Args, named.PartialArgs, named.WillContinue = nil, nil, nil
		start.FunctionCall = &named
		p, err := rd.part(&start, int(ci), cs.next)
		if err != nil {
			return dst, err
		}
		p.GetToolCall().Arguments = ""
		dst = cs.close(dst, ci)
		cs.call = &streamingCall{index: cs.next}
		cs.next++
		cs.toolUse = true
		dst = append(dst, translate.PartStartEvent(ci, int32(cs.call.index), p))
		if len(fc.Args) > 0 {
			if err := cs.call.args.seed(fc.Args); err != nil {
				return dst, fmt.Errorf("functionCall.args: %w", err)
			}
		}
	} else if cs.call == nil {
		if len(fc.PartialArgs) > 0 || len(fc.Args) > 0 {
			return dst, errors.New("functionCall without a name and no call in progress")
		}
		// The empty functionCall that ends a call already ended.
		return dst, nil
	}
	for i := range fc.PartialArgs {
		if err := cs.call.apply(&fc.PartialArgs[i]); err != nil {
			return dst, err
		}
	}
	if fc.WillContinue == nil || !*fc.WillContinue {
		dst = cs.finishCall(dst, ci)
	}
	return dst, nil
}

// seed sets the arguments a starting part already holds.
func (n *argNode) seed(raw jsontext.Value) error {
	if raw.Kind() != '{' {
		return errors.New("args must be an object")
	}
	return n.read(jsontext.NewDecoder(bytes.NewReader(raw)), 0)
}

func (n *argNode) read(d *jsontext.Decoder, depth int) error {
	if depth > maxArgDepth {
		return errors.New("args nest too deep")
	}
	switch d.PeekKind() {
	case '{', '[':
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		n.kind = 'o'
		if tok.Kind() == '[' {
			n.kind = 'a'
		}
		for d.PeekKind() != '}' && d.PeekKind() != ']' {
			c := &argNode{}
			if n.kind == 'o' {
				key, err := d.ReadToken()
				if err != nil {
					return err
				}
				if n.fields == nil {
					n.fields = map[string]*argNode{}
				}
				if _, dup := n.fields[key.String()]; !dup {
					n.keys = append(n.keys, key.String())
				}
				n.fields[key.String()] = c
			} else {
				n.items = append(n.items, c)
			}
			if err := c.read(d, depth+1); err != nil {
				return err
			}
		}
		_, err = d.ReadToken()
		return err
	case '"':
		tok, err := d.ReadToken()
		if err != nil {
			return err
		}
		n.kind = 's'
		n.str.WriteString(tok.String())
		return nil
	default:
		v, err := d.ReadValue()
		if err != nil {
			return err
		}
		n.kind, n.lit = 'v', string(v)
		return nil
	}
}

// finishCall ends the call being assembled: its arguments, then its end.
func (cs *candStream) finishCall(dst []*parleyv1.StreamEvent, ci int32) []*parleyv1.StreamEvent {
	c := cs.call
	if c == nil {
		return dst
	}
	cs.call = nil
	if c.args.kind == 0 {
		c.args.kind = 'o'
	}
	args := string(c.args.appendJSON(nil))
	dst = append(dst, &parleyv1.StreamEvent{Event: &parleyv1.StreamEvent_PartDelta{PartDelta: &parleyv1.PartDelta{CandidateIndex: ci, Index: int32(c.index), Delta: &parleyv1.PartDelta_Arguments{Arguments: args}}}})
	return append(dst, translate.PartStopEvent(ci, int32(c.index)))
}
