package responses

import (
	"bytes"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

// The request echo: the members of a response that repeat the request.
// From an upstream of this dialect they are kept as it sent them
// (decodeResponse); toward a client they are written as kept, else built
// from the canonical request with the service's defaults filled in.

// echoMembers are the response members that echo the request, in the
// order of requestEcho's.
var echoMembers = [echoedCount]string{"instructions", "max_output_tokens", "parallel_tool_calls", "reasoning", "store", "temperature", "text", "tool_choice", "tools", "top_p", "truncation", "user", "metadata"}

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

// echo fills the members that echo the request: as an upstream of this
// dialect sent them, else from the canonical request with the service's
// defaults filled in.
func echo(w *Response, req *parleyv1.Request, ext *parleyv1.Extensions) {
	e := echoOf(req)
	e.keep(ext)
	// A whole reply writes its echo once: walked as it is written.
	e.fill(w, false)
}

// requestEcho is what a response echoes of a request, member by member in
// the order of echoMembers, as the service writes it.
type requestEcho [echoedCount]jsontext.Value

// The members of requestEcho, in the order of echoMembers.
const (
	echoedInstructions = iota
	echoedMaxOutputTokens
	echoedParallelToolCalls
	echoedReasoning
	echoedStore
	echoedTemperature
	echoedText
	echoedToolChoice
	echoedTools
	echoedTopP
	echoedTruncation
	echoedUser
	echoedMetadata
	echoedCount
)

// keep takes in place of e's members those an upstream of this dialect
// sent (kept in ext), and reports whether there were any.
func (e *requestEcho) keep(ext *parleyv1.Extensions) (kept bool) {
	for i, name := range echoMembers {
		if v, ok := jsonx.Value(ext, thisDialect, name); ok {
			e[i] = v
			kept = true
		}
	}
	return kept
}

// fill fills the members of w that echo the request; written says they
// are written as AppendRaw writes them (requestEcho.write).
func (e *requestEcho) fill(w *Response, written bool) {
	for i, name := range echoMembers {
		*echoField(w, name) = e[i]
	}
	w.echoWritten = written
}

// write writes every member of e as jsonx.AppendRaw writes it, once, for
// the responses that echo it to copy (Response.echoWritten). It reports
// false when AppendRaw declines one, which those responses then leave to
// Marshal. The service's defaults are written so from the start.
func (e *requestEcho) write() bool {
	buf := echoBuffers.Get().(*[]byte)
	defer echoBuffers.Put(buf)
	for i, v := range e {
		if v == nil || sameBytes(v, echoDefaults[i]) {
			continue
		}
		// Written by echoValue, a member mostly is as AppendRaw writes
		// it already, and stays as it is.
		raw, ok := jsonx.AppendRaw((*buf)[:0], v)
		if !ok {
			return false
		}
		if !bytes.Equal(raw, v) {
			e[i] = bytes.Clone(raw)
		}
		if cap(raw) <= maxEchoBuffer {
			*buf = raw[:0]
		}
	}
	return true
}

// echoBuffers are write's: a member is written into one to be compared
// with what it was. A buffer grown past maxEchoBuffer is let go.
var echoBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

const maxEchoBuffer = 256 << 10

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// echoShallow reports whether the request's echo is made and written
// without reflection and without nesting: its members are strings,
// numbers and booleans, and reasoning settings written by hand. Tools
// (their schemas, and a kept tool read back by reflection), a response
// format, metadata and a tool choice go deep, on the handler's stack of
// a stream that waits deep too, and so are taken off it (offstack).
func echoShallow(req *parleyv1.Request) bool {
	return len(req.GetTools()) == 0 && req.GetResponseFormat() == nil &&
		len(req.GetMetadata()) == 0 && req.GetToolChoice() == nil &&
		req.GetGeneration().GetVerbosity() == parleyv1.Verbosity_VERBOSITY_UNSPECIFIED
}

// echoOf is the echo of req: what it sets, and the service's defaults for
// the rest, written once (echoDefaults).
func echoOf(req *parleyv1.Request) requestEcho {
	e := echoDefaults
	set := func(i int, v any) {
		e[i] = nil
		if raw, ok := echoValue(v); ok {
			e[i] = raw
		}
	}
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	allTools := true
	if len(req.GetTools()) > 0 {
		var tools []tool
		tools, allTools = echoTools(req)
		set(echoedTools, tools)
	}
	if len(req.GetInstructions()) > 0 {
		set(echoedInstructions, translate.JoinText(req.GetInstructions(), "\n\n"))
	}
	if g.MaxOutputTokens != nil {
		set(echoedMaxOutputTokens, g.GetMaxOutputTokens())
	}
	if tc := req.GetToolChoice(); tc != nil {
		if tc.ParallelCalls != nil {
			set(echoedParallelToolCalls, tc.GetParallelCalls())
		}
		enc := &encoder{req: req, same: req.GetExtensions().GetDialect() == thisDialect}
		// The choice is echoed when every tool could be (as an upstream
		// request is written, or refused).
		var wr Request
		if allTools && enc.toolChoice(&wr) == nil && wr.ToolChoice != nil {
			set(echoedToolChoice, wr.ToolChoice)
		}
	}
	if rc := req.GetReasoning(); rc != nil {
		e[echoedReasoning] = reasoningEcho(rc)
	}
	if req.Store != nil {
		set(echoedStore, req.GetStore())
	}
	if g.Temperature != nil {
		set(echoedTemperature, g.GetTemperature())
	}
	if g.TopP != nil {
		set(echoedTopP, g.GetTopP())
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
		set(echoedText, text)
	}
	if req.GetTruncation() == parleyv1.Truncation_TRUNCATION_AUTO {
		set(echoedTruncation, "auto")
	}
	if req.GetEndUserId() != "" {
		set(echoedUser, req.GetEndUserId())
	}
	if len(req.GetMetadata()) > 0 {
		set(echoedMetadata, req.GetMetadata())
	}
	return e
}

// reasoningEcho is the echo of reasoning settings, as Marshal writes
// {"effort": word or null, "summary": word or null}, written by hand: a
// map by reflection went deep enough to take a stream's start off its
// handler's stack (echoShallow).
func reasoningEcho(rc *parleyv1.ReasoningConfig) []byte {
	summary := ""
	for s, v := range summaries {
		if v == rc.GetSummary() {
			summary = s
		}
	}
	b := append(make([]byte, 0, 48), `{"effort":`...)
	b = appendWordOrNull(b, openai.EffortWord(rc.GetEffort()))
	b = append(b, `,"summary":`...)
	b = appendWordOrNull(b, summary)
	return append(b, '}')
}

// appendWordOrNull appends a word as a JSON string, or null for none.
func appendWordOrNull(b []byte, word string) []byte {
	if word == "" {
		return append(b, "null"...)
	}
	b, _ = jsonx.AppendQuote(b, word)
	return b
}

// echoValue is v as Marshal writes it, ok false where Marshal refuses it.
// The members most requests set are a string, a number or a boolean
// (instructions, max_output_tokens, store), and an agent's tools, written
// here by hand: by reflection they were most of the echo's cost; the
// rest is Marshal's.
func echoValue(v any) (_ []byte, ok bool) {
	switch v := v.(type) {
	case string:
		return jsonx.AppendQuote(nil, v)
	case int32:
		return strconv.AppendInt(nil, int64(v), 10), true
	case int64:
		return strconv.AppendInt(nil, v, 10), true
	case bool:
		return strconv.AppendBool(nil, v), true
	case float64:
		if b, ok := jsonx.AppendFloat(nil, v); ok {
			return b, true
		}
	case []tool:
		// An agent's tools, with their schemas: as an upstream request
		// writes them.
		raw, err := jsonx.Encode(&v, appendTools)
		return raw, err == nil
	}
	raw, err := jsonx.Marshal(v)
	return raw, err == nil
}

// echoDefaults are what the service echoes of a request that sets none
// of the members, marshalled once: most requests set few of them, and
// marshalling every member of every stream's echo by reflection was most
// of a short stream's encoding.
var echoDefaults = func() (e requestEcho) {
	for i, v := range [echoedCount]any{
		echoedInstructions:      nil,
		echoedMaxOutputTokens:   nil,
		echoedParallelToolCalls: true,
		echoedReasoning:         map[string]any{"effort": nil, "summary": nil},
		echoedStore:             true,
		echoedTemperature:       1.0,
		echoedText:              map[string]any{"format": map[string]any{"type": "text"}},
		echoedToolChoice:        "auto",
		echoedTools:             []tool{},
		echoedTopP:              1.0,
		echoedTruncation:        "disabled",
		echoedUser:              nil,
		echoedMetadata:          map[string]string{},
	} {
		raw, err := jsonx.Marshal(v)
		if err != nil {
			panic(err)
		}
		if raw, ok := jsonx.AppendRaw(nil, raw); ok {
			e[i] = raw
		} else {
			panic("the echo's defaults are not written as AppendRaw writes them")
		}
	}
	return e
}()

func orObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// appendTools appends a list of tools.
func appendTools(b []byte, ts *[]tool) ([]byte, bool) {
	return jsonx.List(append(b, '['), *ts, appendTool)
}
