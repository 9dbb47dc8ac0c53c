package responses

import (
	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The request echo: the members of a response that repeat the request.
// From an upstream of this dialect they are kept as it sent them
// (decodeResponse); toward a client they are written as kept, else built
// from the canonical request with the service's defaults filled in.

// echoMembers are the response members that echo the request.
var echoMembers = []string{"instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "store", "temperature", "text", "tool_choice", "tools", "top_p", "truncation", "user", "metadata"}

func echoField(w *Response, name string) *jsontext.Value {
	switch name {
	case "instructions":
		return &w.Instructions
	case "max_output_tokens":
		return &w.MaxOutputTokens
	case "parallel_tool_calls":
		return &w.ParallelToolCalls
	case "reasoning":
		return &w.Reasoning
	case "store":
		return &w.Store
	case "temperature":
		return &w.Temperature
	case "text":
		return &w.Text
	case "tool_choice":
		return &w.ToolChoice
	case "tools":
		return &w.Tools
	case "top_p":
		return &w.TopP
	case "truncation":
		return &w.Truncation
	case "user":
		return &w.User
	}
	return &w.Metadata
}

// copyEcho fills the members that echo the request from another snapshot
// of the same response.
func copyEcho(w, from *Response) {
	for _, name := range echoMembers {
		*echoField(w, name) = *echoField(from, name)
	}
}

// echo fills the members that echo the request: as an upstream of this
// dialect sent them, else from the canonical request with the service's
// defaults filled in.
func echo(w *Response, req *parleyv1.Request, ext *parleyv1.Extensions) {
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	// built holds the members the request sets; the others are the
	// defaults, written once (echoDefaults).
	built := make(map[string]any, 4)
	if len(req.GetTools()) > 0 {
		built["tools"] = echoTools(req)
	}
	if len(req.GetInstructions()) > 0 {
		built["instructions"] = joinText(req.GetInstructions(), "\n\n")
	}
	if g.MaxOutputTokens != nil {
		built["max_output_tokens"] = g.GetMaxOutputTokens()
	}
	if tc := req.GetToolChoice(); tc != nil {
		if tc.ParallelCalls != nil {
			built["parallel_tool_calls"] = tc.GetParallelCalls()
		}
		e := &encoder{req: req, same: req.GetExtensions().GetDialect() == thisDialect}
		var wr Request
		if e.tools(&wr) == nil && wr.ToolChoice != nil {
			built["tool_choice"] = wr.ToolChoice
		}
	}
	if rc := req.GetReasoning(); rc != nil {
		r := map[string]any{"effort": nil, "summary": nil}
		if s := openai.EffortWord(rc.GetEffort()); s != "" {
			r["effort"] = s
		}
		for s, v := range summaries {
			if v == rc.GetSummary() {
				r["summary"] = s
			}
		}
		built["reasoning"] = r
	}
	if req.Store != nil {
		built["store"] = req.GetStore()
	}
	if g.Temperature != nil {
		built["temperature"] = g.GetTemperature()
	}
	if g.TopP != nil {
		built["top_p"] = g.GetTopP()
	}
	var format any
	if rf := req.GetResponseFormat(); rf != nil {
		switch rf.GetKind() {
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
			format = map[string]any{"type": "json_object"}
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
			f := map[string]any{"type": "json_schema", "name": rf.GetName(), "strict": rf.GetStrict(), "schema": jsontext.Value(orObject(rf.GetSchema()))}
			if rf.GetDescription() != "" {
				f["description"] = rf.GetDescription()
			}
			format = f
		}
	}
	if verbosity := openai.VerbosityWord(g.GetVerbosity()); format != nil || verbosity != "" {
		text := map[string]any{"format": map[string]any{"type": "text"}}
		if format != nil {
			text["format"] = format
		}
		if verbosity != "" {
			text["verbosity"] = verbosity
		}
		built["text"] = text
	}
	if req.GetTruncation() == parleyv1.Truncation_TRUNCATION_AUTO {
		built["truncation"] = "auto"
	}
	if req.GetEndUserId() != "" {
		built["user"] = req.GetEndUserId()
	}
	if len(req.GetMetadata()) > 0 {
		built["metadata"] = req.GetMetadata()
	}
	for _, name := range echoMembers {
		dst := echoField(w, name)
		if v, ok := jsonx.Value(ext, thisDialect, name); ok {
			*dst = v
			continue
		}
		v, ok := built[name]
		if !ok {
			*dst = echoDefaults[name]
			continue
		}
		if raw, err := jsonx.Marshal(v); err == nil {
			*dst = raw
		}
	}
}

// echoDefaults are what the service echoes of a request that sets none
// of the members, marshalled once: most requests set few of them, and
// marshalling every member of every stream's echo by reflection was most
// of a short stream's encoding.
var echoDefaults = func() map[string]jsontext.Value {
	m := make(map[string]jsontext.Value, len(echoMembers))
	for name, v := range echoDefaultValues() {
		raw, err := jsonx.Marshal(v)
		if err != nil {
			panic(err)
		}
		m[name] = raw
	}
	return m
}()

// echoDefaultValues are the service's defaults of the members that echo
// the request.
func echoDefaultValues() map[string]any {
	return map[string]any{
		"instructions":        nil,
		"max_output_tokens":   nil,
		"parallel_tool_calls": true,
		"reasoning":           map[string]any{"effort": nil, "summary": nil},
		"store":               true,
		"temperature":         1.0,
		"text":                map[string]any{"format": map[string]any{"type": "text"}},
		"tool_choice":         "auto",
		"tools":               []tool{},
		"top_p":               1.0,
		"truncation":          "disabled",
		"user":                nil,
		"metadata":            map[string]string{},
	}
}

func orObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}
