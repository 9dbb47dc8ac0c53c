package translate

import (
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
)

// A request decoded from a JSON dialect has passed that dialect's own
// checks. A canonical request from a Connect client has not: CheckRequest
// holds it to the rules every upstream encoder relies on, and names each
// bad field by its path in the canonical model (prefix, then proto field
// names and indexes, e.g. request.messages[2].parts[0].tool_call.name).

// maxViolations bounds the violations one error lists.
const maxViolations = 20

// checker gathers field violations.
type checker struct {
	prefix     string
	violations []*parleyv1.FieldViolation
}

func (c *checker) bad(field, format string, args ...any) {
	if len(c.violations) < maxViolations {
		c.violations = append(c.violations, &parleyv1.FieldViolation{Field: c.prefix + field, Description: fmt.Sprintf(format, args...)})
	}
}

// err is the InvalidArgument error listing the violations, or nil.
func (c *checker) err() error {
	if len(c.violations) == 0 {
		return nil
	}
	v := c.violations[0]
	msg := v.GetField() + ": " + v.GetDescription()
	if n := len(c.violations); n > 1 {
		msg += fmt.Sprintf(" (and %d more)", n-1)
	}
	return &StatusError{Err: &parleyv1.Error{Code: parleyv1.Code_CODE_INVALID_ARGUMENT, Message: msg, FieldViolations: c.violations}}
}

// CheckRequest reports what is wrong with a canonical request: a model is
// named; every turn has a role and parts, every part a kind (or a
// dialect's extension block); tool calls and function tools have names,
// tool results their call; JSON text fields hold JSON; sampling settings
// are in range; enum values are known; extension values are JSON. Field
// paths start with prefix (say "request.").
func CheckRequest(req *parleyv1.Request, prefix string) error {
	c := &checker{prefix: prefix}
	if req.GetModel() == "" {
		c.bad("model", "is required")
	}
	for i, p := range req.GetInstructions() {
		c.part("instructions["+strconv.Itoa(i)+"]", p)
	}
	for i, m := range req.GetMessages() {
		at := "messages[" + strconv.Itoa(i) + "]"
		if m.GetRole() == parleyv1.Role_ROLE_UNSPECIFIED {
			c.bad(at+".role", "is required")
		}
		if len(m.GetParts()) == 0 {
			c.bad(at+".parts", "a turn needs at least one part")
		}
		for j, p := range m.GetParts() {
			c.part(at+".parts["+strconv.Itoa(j)+"]", p)
		}
	}
	names := map[string]bool{}
	for i, t := range req.GetTools() {
		at := "tools[" + strconv.Itoa(i) + "]"
		if t.GetKind() == nil && len(t.GetExtensions().GetFields()) == 0 {
			c.bad(at, "names no kind of tool")
		}
		if f := t.GetFunction(); f != nil {
			switch {
			case f.GetName() == "":
				c.bad(at+".function.name", "is required")
			case names[f.GetName()]:
				c.bad(at+".function.name", "%q is declared twice", f.GetName())
			}
			names[f.GetName()] = true
			c.jsonText(at+".function.parameters", f.GetParameters())
		}
	}
	if tc := req.GetToolChoice(); tc.GetMode() == parleyv1.ToolChoiceMode_TOOL_CHOICE_MODE_TOOL &&
		tc.GetKind() == parleyv1.ToolKind_TOOL_KIND_UNSPECIFIED {
		switch {
		case tc.GetName() == "":
			c.bad("tool_choice.name", "is required when mode is TOOL")
		case !names[tc.GetName()]:
			c.bad("tool_choice.name", "%q is not one of the declared functions", tc.GetName())
		}
	}
	c.generation(req.GetGeneration())
	if rf := req.GetResponseFormat(); rf.GetKind() == parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA && rf.GetSchema() == "" {
		c.bad("response_format.schema", "is required for JSON_SCHEMA")
	} else {
		c.jsonText("response_format.schema", rf.GetSchema())
	}
	c.walk("", req.ProtoReflect())
	return c.err()
}

// part checks one part.
func (c *checker) part(at string, p *parleyv1.Part) {
	switch k := p.GetKind().(type) {
	case nil:
		if len(p.GetExtensions().GetFields()) == 0 && p.GetSignature() == nil {
			c.bad(at, "a part needs a kind (text, media, tool_call ...)")
		}
	case *parleyv1.Part_Media:
		if k.Media.GetSource() == nil {
			c.bad(at+".media", "needs data, uri or file_id")
		}
	case *parleyv1.Part_ToolCall:
		if k.ToolCall.GetName() == "" && k.ToolCall.GetKind() == parleyv1.ToolKind_TOOL_KIND_UNSPECIFIED {
			c.bad(at+".tool_call.name", "is required")
		}
		c.jsonText(at+".tool_call.arguments", k.ToolCall.GetArguments())
	case *parleyv1.Part_ToolResult:
		if k.ToolResult.GetCallId() == "" && k.ToolResult.GetName() == "" {
			c.bad(at+".tool_result.call_id", "is required (or name, for dialects that match results by name)")
		}
		for i, q := range k.ToolResult.GetContent() {
			c.part(at+".tool_result.content["+strconv.Itoa(i)+"]", q)
		}
	}
}

// generation checks the sampling settings' ranges.
func (c *checker) generation(g *parleyv1.GenerationConfig) {
	if g == nil {
		return
	}
	if g.MaxOutputTokens != nil && g.GetMaxOutputTokens() < 1 {
		c.bad("generation.max_output_tokens", "must be 1 or more; got %d", g.GetMaxOutputTokens())
	}
	if g.Temperature != nil && (g.GetTemperature() < 0 || g.GetTemperature() > 2) {
		c.bad("generation.temperature", "must be between 0 and 2; got %g", g.GetTemperature())
	}
	if g.TopP != nil && (g.GetTopP() < 0 || g.GetTopP() > 1) {
		c.bad("generation.top_p", "must be between 0 and 1; got %g", g.GetTopP())
	}
	if g.TopK != nil && g.GetTopK() < 0 {
		c.bad("generation.top_k", "must be 0 or more; got %d", g.GetTopK())
	}
	if g.CandidateCount != nil && g.GetCandidateCount() < 1 {
		c.bad("generation.candidate_count", "must be 1 or more; got %d", g.GetCandidateCount())
	}
	if g.TopLogprobs != nil && (g.GetTopLogprobs() < 0 || g.GetTopLogprobs() > 20) {
		c.bad("generation.top_logprobs", "must be between 0 and 20; got %d", g.GetTopLogprobs())
	}
	for _, p := range []struct {
		name string
		v    *float64
	}{{"presence_penalty", g.PresencePenalty}, {"frequency_penalty", g.FrequencyPenalty}} {
		if p.v != nil && (*p.v < -2 || *p.v > 2) {
			c.bad("generation."+p.name, "must be between -2 and 2; got %g", *p.v)
		}
	}
}

// jsonText checks a field that holds JSON text, when it is set.
func (c *checker) jsonText(at, s string) {
	if s != "" && !json.Valid([]byte(s)) {
		c.bad(at, "is not valid JSON")
	}
}

// walk checks, anywhere in a message, that enum values are known and that
// extension values are JSON.
func (c *checker) walk(at string, m protoreflect.Message) {
	if ext, ok := m.Interface().(*parleyv1.Extensions); ok {
		for k, v := range ext.GetFields() {
			if !json.Valid([]byte(v)) {
				c.bad(join(at, "fields["+strconv.Quote(k)+"]"), "is not valid JSON")
			}
		}
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := join(at, string(fd.Name()))
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				c.value(name+"["+strconv.Itoa(i)+"]", fd, l.Get(i))
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				c.value(name+"["+strconv.Quote(k.String())+"]", fd.MapValue(), mv)
				return true
			})
		default:
			c.value(name, fd, v)
		}
		return true
	})
}

func (c *checker) value(at string, fd protoreflect.FieldDescriptor, v protoreflect.Value) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			c.bad(at, "%d is not a known %s value", v.Enum(), fd.Enum().Name())
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		c.walk(at, v.Message())
	}
}

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}
