package responses

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/internal/jsonx"
	"github.com/parleyhq/parley/translate/internal/openai"
)

var statuses = map[string]parleyv1.ResponseStatus{
	"completed":   parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
	"in_progress": parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS,
	"incomplete":  parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE,
	"failed":      parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED,
	"cancelled":   parleyv1.ResponseStatus_RESPONSE_STATUS_CANCELLED,
	"queued":      parleyv1.ResponseStatus_RESPONSE_STATUS_QUEUED,
}

func responseStatusWord(s parleyv1.ResponseStatus) string {
	for w, v := range statuses {
		if v == s {
			return w
		}
	}
	return "completed"
}

var incompleteReasons = map[string]parleyv1.FinishReason{
	"max_output_tokens": parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS,
	"content_filter":    parleyv1.FinishReason_FINISH_REASON_SAFETY,
}

// incompleteWord is the incomplete reason a client sees for a finish
// reason that ends a response early, "" for one that does not.
func incompleteWord(r parleyv1.FinishReason) string {
	switch r {
	case parleyv1.FinishReason_FINISH_REASON_MAX_TOKENS, parleyv1.FinishReason_FINISH_REASON_CONTEXT_WINDOW_EXCEEDED:
		return "max_output_tokens"
	case parleyv1.FinishReason_FINISH_REASON_SAFETY, parleyv1.FinishReason_FINISH_REASON_RECITATION,
		parleyv1.FinishReason_FINISH_REASON_BLOCKLIST, parleyv1.FinishReason_FINISH_REASON_PROHIBITED_CONTENT,
		parleyv1.FinishReason_FINISH_REASON_SPII, parleyv1.FinishReason_FINISH_REASON_IMAGE_SAFETY:
		return "content_filter"
	}
	return ""
}

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

// DecodeResponse implements translate.Upstream.
func (Upstream) DecodeResponse(t translate.Target, body []byte) (*parleyv1.Response, error) {
	var w Response
	if err := jsonx.Unmarshal(body, &w); err != nil {
		return nil, translate.UpstreamProtocol(D, err)
	}
	return decodeResponse(&w, t)
}

func decodeResponse(w *Response, t translate.Target) (*parleyv1.Response, error) {
	resp := &parleyv1.Response{Id: w.ID, Model: w.Model, Status: statuses[w.Status], Extensions: &parleyv1.Extensions{Dialect: D}}
	if w.CreatedAt > 0 {
		resp.CreatedAt = timestamppb.New(time.Unix(w.CreatedAt, 0))
	}
	if w.PreviousResponseID != nil {
		resp.PreviousResponseId = *w.PreviousResponseID
	}
	if w.ServiceTier != nil {
		if st, ok := openai.ServiceTier(*w.ServiceTier); ok {
			resp.ServiceTier = st
		} else {
			jsonx.KeepValue(&resp.Extensions, D, "service_tier", quote(*w.ServiceTier))
		}
	}
	for _, name := range echoMembers {
		if v := *echoField(w, name); len(v) > 0 {
			jsonx.KeepValue(&resp.Extensions, D, name, v)
		}
	}
	jsonx.Keep(&resp.Extensions, D, "", w.Unknown)
	if e := w.Error; e != nil {
		resp.Error = failure(e)
	}
	cand := &parleyv1.Candidate{}
	d := &itemDecoder{t: t, names: map[string]string{}}
	for i := range w.Output {
		parts, err := d.outputItem(&w.Output[i])
		if err != nil {
			return nil, translate.UpstreamProtocol(D, err)
		}
		cand.Parts = append(cand.Parts, parts...)
	}
	cand.FinishReason = finish(w.Status, w.IncompleteDetails, cand.Parts)
	if inc := w.IncompleteDetails; inc != nil {
		resp.IncompleteDetails = &parleyv1.IncompleteDetails{Reason: cand.FinishReason}
		if _, ok := incompleteReasons[inc.Reason]; !ok {
			cand.FinishMessage = inc.Reason
		}
	}
	resp.Candidates = []*parleyv1.Candidate{cand}
	if w.Usage != nil {
		resp.Usage = canonicalUsage(w.Usage, &resp.Extensions)
	}
	return resp, nil
}

// outputItem decodes an output item into parts; the members of the item
// with no canonical home ride on its parts.
func (d *itemDecoder) outputItem(it *Item) ([]*parleyv1.Part, error) {
	m, err := d.item(it, "output")
	if err != nil || m == nil {
		return nil, err
	}
	ext := m.GetExtensions()
	for _, p := range m.Parts {
		for k, v := range ext.GetFields() {
			if strings.HasPrefix(k, "@") {
				if k == extSummary {
					jsonx.KeepValue(&p.Extensions, D, k, jsontext.Value(v))
				}
				continue
			}
			jsonx.KeepValue(&p.Extensions, D, "item/"+k, jsontext.Value(v))
		}
	}
	return m.Parts, nil
}

// failure converts the error object of a failed response.
func failure(e *ResponseError) *parleyv1.Error {
	out := &parleyv1.Error{Code: parleyv1.Code_CODE_INTERNAL, Message: e.Message, Reason: e.Code, Origin: &parleyv1.Origin{Dialect: D}}
	switch e.Code {
	case "rate_limit_exceeded":
		out.Code = parleyv1.Code_CODE_RESOURCE_EXHAUSTED
		out.Retry = &parleyv1.RetryAdvice{Retryable: true}
	case "server_error":
		out.Retry = &parleyv1.RetryAdvice{Retryable: true}
	case "invalid_prompt", "invalid_image", "invalid_base64_image", "invalid_image_url", "image_too_large", "image_too_small",
		"empty_image_file", "invalid_image_format", "image_content_policy_violation", "vector_store_timeout":
		out.Code = parleyv1.Code_CODE_INVALID_ARGUMENT
	}
	jsonx.Keep(&out.Extensions, D, "error", e.Unknown)
	return out
}

func finish(status string, inc *Incomplete, parts []*parleyv1.Part) parleyv1.FinishReason {
	if inc != nil {
		if r, ok := incompleteReasons[inc.Reason]; ok {
			return r
		}
		return parleyv1.FinishReason_FINISH_REASON_OTHER
	}
	if status == "failed" {
		return parleyv1.FinishReason_FINISH_REASON_OTHER
	}
	if translate.HasToolCalls(parts) {
		return parleyv1.FinishReason_FINISH_REASON_TOOL_USE
	}
	return parleyv1.FinishReason_FINISH_REASON_STOP
}

func canonicalUsage(u *Usage, ext **parleyv1.Extensions) *parleyv1.Usage {
	out := &parleyv1.Usage{InputTokens: &u.InputTokens, OutputTokens: &u.OutputTokens, TotalTokens: &u.TotalTokens}
	if d := u.InputTokensDetails; d != nil {
		out.CacheReadTokens = &d.CachedTokens
		jsonx.Keep(ext, D, "usage/input_tokens_details", d.Unknown)
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = &d.ReasoningTokens
		jsonx.Keep(ext, D, "usage/output_tokens_details", d.Unknown)
	}
	jsonx.Keep(ext, D, "usage", u.Unknown)
	return out
}

// wireUsage renders usage; the details are always present, as the service
// sends them.
func wireUsage(u *parleyv1.Usage, ext *parleyv1.Extensions) *Usage {
	if u == nil {
		return nil
	}
	w := &Usage{InputTokens: u.GetInputTokens(), OutputTokens: u.GetOutputTokens(), TotalTokens: u.GetTotalTokens(), Unknown: jsonx.Take(ext, D, "usage")}
	if u.TotalTokens == nil {
		w.TotalTokens = w.InputTokens + w.OutputTokens
	}
	w.InputTokensDetails = &InputDetails{CachedTokens: u.GetCacheReadTokens(), Unknown: jsonx.Take(ext, D, "usage/input_tokens_details")}
	w.OutputTokensDetails = &OutputDetails{ReasoningTokens: u.GetReasoningTokens(), Unknown: jsonx.Take(ext, D, "usage/output_tokens_details")}
	return w
}

// EncodeResponse implements translate.Client.
func (Client) EncodeResponse(req *parleyv1.Request, resp *parleyv1.Response) ([]byte, error) {
	w := snapshot(req, resp, responseStatus(resp))
	w.Output = outputItems(resp.GetCandidates())
	w.Usage = wireUsage(resp.GetUsage(), resp.GetExtensions())
	return jsonx.Marshal(w)
}

// responseStatus is the status a whole response ends in.
func responseStatus(resp *parleyv1.Response) parleyv1.ResponseStatus {
	switch {
	case resp.GetError() != nil:
		return parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED
	case resp.GetIncompleteDetails() != nil:
		return parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE
	}
	if cs := resp.GetCandidates(); len(cs) > 0 && incompleteWord(cs[0].GetFinishReason()) != "" {
		return parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE
	}
	if s := resp.GetStatus(); s != parleyv1.ResponseStatus_RESPONSE_STATUS_UNSPECIFIED && s != parleyv1.ResponseStatus_RESPONSE_STATUS_IN_PROGRESS {
		return s
	}
	return parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED
}

// snapshot renders the response object without output and usage: the
// envelope, the request echo, status, error and incomplete details.
func snapshot(req *parleyv1.Request, resp *parleyv1.Response, status parleyv1.ResponseStatus) *Response {
	ext := resp.GetExtensions()
	w := &Response{
		ID: resp.GetId(), Object: "response", CreatedAt: time.Now().Unix(), Status: responseStatusWord(status),
		Model: resp.GetModel(), Output: []Item{}, Unknown: jsonx.Take(ext, D, ""),
	}
	for _, name := range echoMembers {
		delete(w.Unknown, name)
	}
	delete(w.Unknown, "service_tier")
	if w.ID == "" {
		w.ID = translate.NewID("resp_")
	}
	if resp.GetCreatedAt() != nil {
		w.CreatedAt = resp.GetCreatedAt().GetSeconds()
	}
	if w.Model == "" {
		w.Model = req.GetModel()
	}
	if s := openai.ServiceTierWord(resp.GetServiceTier()); s != "" {
		w.ServiceTier = &s
	} else if v, ok := jsonx.Value(ext, D, "service_tier"); ok {
		var s string
		if jsonx.Unmarshal(v, &s) == nil {
			w.ServiceTier = &s
		}
	}
	prev := req.GetPreviousResponseId()
	if prev == "" {
		prev = resp.GetPreviousResponseId()
	}
	if prev != "" {
		w.PreviousResponseID = &prev
	}
	if e := resp.GetError(); e != nil && status == parleyv1.ResponseStatus_RESPONSE_STATUS_FAILED {
		w.Error = failureObject(e)
	}
	if status == parleyv1.ResponseStatus_RESPONSE_STATUS_INCOMPLETE {
		reason := ""
		if cs := resp.GetCandidates(); len(cs) > 0 {
			reason = incompleteWord(cs[0].GetFinishReason())
			if reason == "" {
				reason = cs[0].GetFinishMessage()
			}
		}
		if reason == "" {
			reason = incompleteWord(resp.GetIncompleteDetails().GetReason())
		}
		w.IncompleteDetails = &Incomplete{Reason: reason}
	}
	echo(w, req, ext)
	return w
}

// failureObject renders an error as a failed response's error.
func failureObject(e *parleyv1.Error) *ResponseError {
	code := e.GetReason()
	if e.GetOrigin().GetDialect() != D || code == "" {
		switch e.GetCode() {
		case parleyv1.Code_CODE_RESOURCE_EXHAUSTED:
			code = "rate_limit_exceeded"
		case parleyv1.Code_CODE_INVALID_ARGUMENT:
			code = "invalid_prompt"
		default:
			code = "server_error"
		}
	}
	msg := e.GetMessage()
	if msg == "" {
		msg = http.StatusText(translate.HTTPStatusOf(e))
	}
	out := &ResponseError{Code: code, Message: msg}
	if e.GetOrigin().GetDialect() == D {
		out.Unknown = jsonx.Take(e.GetExtensions(), D, "error")
	}
	return out
}

// echo fills the members that echo the request: as an upstream of this
// dialect sent them, else from the canonical request with the service's
// defaults filled in.
func echo(w *Response, req *parleyv1.Request, ext *parleyv1.Extensions) {
	g := req.GetGeneration()
	if g == nil {
		g = &parleyv1.GenerationConfig{}
	}
	built := map[string]any{
		"instructions":        nil,
		"max_output_tokens":   nil,
		"parallel_tool_calls": true,
		"reasoning":           map[string]any{"effort": nil, "summary": nil},
		"store":               true,
		"temperature":         1.0,
		"text":                map[string]any{"format": map[string]any{"type": "text"}},
		"tool_choice":         "auto",
		"tools":               echoTools(req),
		"top_p":               1.0,
		"truncation":          "disabled",
		"user":                nil,
		"metadata":            map[string]string{},
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
		e := &encoder{req: req, same: req.GetExtensions().GetDialect() == D}
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
	text := map[string]any{"format": map[string]any{"type": "text"}}
	if rf := req.GetResponseFormat(); rf != nil {
		switch rf.GetKind() {
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_OBJECT:
			text["format"] = map[string]any{"type": "json_object"}
		case parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA:
			f := map[string]any{"type": "json_schema", "name": rf.GetName(), "strict": rf.GetStrict(), "schema": jsontext.Value(orObject(rf.GetSchema()))}
			if rf.GetDescription() != "" {
				f["description"] = rf.GetDescription()
			}
			text["format"] = f
		}
	}
	if v := openai.VerbosityWord(g.GetVerbosity()); v != "" {
		text["verbosity"] = v
	}
	built["text"] = text
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
		if v, ok := jsonx.Value(ext, D, name); ok {
			*dst = v
			continue
		}
		raw, err := jsonx.MarshalSorted(built[name])
		if err == nil {
			*dst = raw
		}
	}
}

func orObject(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

// echoTools renders the request's tools as the response echoes them, with
// the service's defaults filled in.
func echoTools(req *parleyv1.Request) []Tool {
	out := []Tool{}
	e := &encoder{req: req, same: req.GetExtensions().GetDialect() == D}
	for _, t := range req.GetTools() {
		wt, ok, err := e.tool(t, "")
		if err != nil || !ok {
			continue
		}
		switch {
		case wt.Type == "function":
			if wt.Strict == nil {
				wt.Strict = new(true)
			}
			if wt.Parameters == nil {
				wt.Parameters = jsontext.Value(`{"type":"object","properties":{}}`)
			}
		case strings.HasPrefix(wt.Type, "web_search"):
			if wt.SearchContextSize == "" {
				wt.SearchContextSize = "medium"
			}
		case wt.Type == "file_search":
			if wt.Filters == nil {
				wt.Filters = jsontext.Value("null")
			}
			if wt.MaxNumResults == nil {
				wt.MaxNumResults = new(int64(20))
			}
			if wt.RankingOptions == nil {
				wt.RankingOptions = &RankingOptions{Ranker: "auto", ScoreThreshold: new(0.0)}
			}
		}
		out = append(out, wt)
	}
	return out
}

// EncodeError implements translate.Client.
func (Client) EncodeError(e *parleyv1.Error) (int, []byte) { return openai.EncodeError(e) }

// DecodeError implements translate.Upstream.
func (Upstream) DecodeError(status int, header http.Header, body []byte) *parleyv1.Error {
	return openai.DecodeError(D, status, header, body)
}
