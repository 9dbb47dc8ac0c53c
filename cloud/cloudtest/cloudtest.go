// Package cloudtest holds fakes of the clouds Parley reaches (Amazon
// Bedrock, Google Vertex AI, Azure OpenAI) for tests. Each fake checks what
// the real service checks before it answers: Bedrock recomputes the SigV4
// signature of every request with the AWS SDK's own signer; Vertex mints
// OAuth tokens at its own token endpoint only for a JWT signed by the
// service account's key, and accepts only live tokens it minted; Azure
// checks the api-key header or an Entra ID token it minted, and the
// api-version of the deployments surface. Each also checks the body rules
// of its surface (anthropic_version, no model in the body, ...).
//
// The fakes answer every chat request the same way, in the dialect asked:
// with "<cloud> <model>: <the last user text>", or, when the request
// declares function tools and holds no tool result yet, with a call of the
// first tool ({"city": "Paris"}); a request that holds a tool result is
// answered "<cloud> <model>: the tool said <result>". Replies and streams
// are rendered by Parley's own client-side encoders of the dialect, whose
// output the official SDKs' tests pin.
//
// Bedrock's Converse API, which Parley speaks only as an upstream, has no
// such encoder: its fake (converse.go) reads requests into the dialect's
// wire types, checks the service's rules (alternating turns that open
// with the user's, no blank text, a tool configuration whenever the turns
// hold tool calls or results, tool-use ids of the service's form, each
// result answering a call of the turn before, reasoning signed by the
// fake's own model, the thinking field of Anthropic models) and writes
// the service's JSON reply or its AWS event-stream messages itself, by
// the same rule. Its CountTokens counts a token for every four characters
// of text (ConverseTokens).
package cloudtest

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"google.golang.org/protobuf/types/known/timestamppb"

	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/sse"
)

// Seen is one request a fake answered (or refused).
type Seen struct {
	Method string
	// Path is the request's path as it was sent (escaped).
	Path   string
	Query  string
	Header http.Header
	Body   []byte
}

// log keeps what a fake saw.
type log struct {
	mu   sync.Mutex
	seen []Seen
}

func (l *log) add(r *http.Request, body []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, Seen{Method: r.Method, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
}

// Seen returns the requests so far.
func (l *log) Seen() []Seen {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Seen(nil), l.seen...)
}

// Reply is the canonical answer the fakes give to a request.
func Reply(cloud, model string, req *parleyv1.Request) *parleyv1.Response {
	var part *parleyv1.Part
	finish := parleyv1.FinishReason_FINISH_REASON_STOP
	switch result, tool := lastToolResult(req), firstTool(req); {
	case result != "":
		part = text(cloud + " " + model + ": the tool said " + result)
	case tool != "":
		part = &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{
			Id: "toolu_01FakeCloudCall", Name: tool, Arguments: `{"city":"Paris"}`,
		}}}
		finish = parleyv1.FinishReason_FINISH_REASON_TOOL_USE
	default:
		part = text(cloud + " " + model + ": " + lastUserText(req))
	}
	parts := []*parleyv1.Part{part}
	if thinks(req) {
		parts = append([]*parleyv1.Part{{
			Kind:      &parleyv1.Part_Reasoning{Reasoning: &parleyv1.Reasoning{Text: "thinking on " + cloud}},
			Signature: &parleyv1.Opaque{Value: Signature(cloud, model), Origin: &parleyv1.Origin{Dialect: parleyv1.Dialect_DIALECT_MESSAGES}},
		}}, parts...)
	}
	in, out := int64(11), int64(7)
	return &parleyv1.Response{
		Id:         "msg_fake" + strings.ReplaceAll(cloud, " ", ""),
		Model:      model,
		CreatedAt:  timestamppb.New(time.Unix(1764000000, 0)),
		Status:     parleyv1.ResponseStatus_RESPONSE_STATUS_COMPLETED,
		Candidates: []*parleyv1.Candidate{{Parts: parts, FinishReason: finish}},
		Usage:      &parleyv1.Usage{InputTokens: &in, OutputTokens: &out, TotalTokens: new(in + out)},
	}
}

// Signature is the thinking signature a fake's model makes; a fake of a
// messages-dialect model refuses a thinking block that comes back with any
// other, as the service refuses a signature it did not make.
func Signature(cloud, model string) string {
	return "sig-" + cloud + "-" + model
}

// thinks reports whether a request asks for reasoning.
func thinks(req *parleyv1.Request) bool {
	r := req.GetReasoning()
	return r != nil && r.GetMode() != parleyv1.ReasoningMode_REASONING_MODE_UNSPECIFIED && r.GetMode() != parleyv1.ReasoningMode_REASONING_MODE_DISABLED
}

// foreignThinking returns the signature of the first thinking block in
// req's turns that the fake's model did not make, or "".
func foreignThinking(cloud, model string, req *parleyv1.Request) (string, bool) {
	for _, m := range req.GetMessages() {
		for _, p := range m.GetParts() {
			if p.GetReasoning() != nil && p.GetSignature().GetValue() != Signature(cloud, model) {
				return p.GetSignature().GetValue(), true
			}
		}
	}
	return "", false
}

// unthoughtToolTurn reports whether a request that asks for thinking
// continues a tool-use turn whose assistant message does not start with
// a thinking block, which a messages-dialect model refuses.
func unthoughtToolTurn(req *parleyv1.Request) bool {
	if !thinks(req) {
		return false
	}
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		parts := msgs[i].GetParts()
		if msgs[i].GetRole() == parleyv1.Role_ROLE_ASSISTANT {
			calls := false
			for _, p := range parts {
				calls = calls || p.GetToolCall() != nil
			}
			return calls && (len(parts) == 0 || parts[0].GetReasoning() == nil)
		}
		for _, p := range parts {
			if p.GetToolResult() == nil {
				return false
			}
		}
	}
	return false
}

// unthoughtMessage is what the messages-dialect models say to such a
// request.
func unthoughtMessage(req *parleyv1.Request) string {
	return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceding the lastmost set of `tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable `thinking`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking", len(req.GetMessages())-2)
}

func text(s string) *parleyv1.Part {
	return &parleyv1.Part{Kind: &parleyv1.Part_Text{Text: &parleyv1.Text{Text: s}}}
}

func lastUserText(req *parleyv1.Request) string {
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].GetRole() != parleyv1.Role_ROLE_USER {
			continue
		}
		var b strings.Builder
		for _, p := range msgs[i].GetParts() {
			b.WriteString(p.GetText().GetText())
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return "(no user text)"
}

func firstTool(req *parleyv1.Request) string {
	for _, t := range req.GetTools() {
		if f := t.GetFunction(); f != nil {
			return f.GetName()
		}
	}
	return ""
}

func lastToolResult(req *parleyv1.Request) string {
	msgs := req.GetMessages()
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, p := range msgs[i].GetParts() {
			if tr := p.GetToolResult(); tr != nil {
				var b strings.Builder
				for _, c := range tr.GetContent() {
					b.WriteString(c.GetText().GetText())
				}
				return b.String()
			}
		}
	}
	return ""
}

// render answers req in the dialect of client c, whole or as its
// server-sent-event stream.
func render(c translate.Client, req *parleyv1.Request, resp *parleyv1.Response, stream bool) ([]byte, error) {
	if !stream {
		return c.EncodeResponse(req, resp)
	}
	var buf bytes.Buffer
	w := sse.NewWriter(&buf)
	enc := c.NewStreamEncoder(req)
	for _, ev := range translate.ReplayResponse(resp) {
		if err := enc.Encode(w, ev); err != nil {
			return nil, err
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// members reads a JSON object's members.
func members(body []byte) (map[string]jsontext.Value, error) {
	var m map[string]jsontext.Value
	err := json.Unmarshal(body, &m)
	return m, err
}

// writeJSON answers with status and a JSON body.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonMarshal writes members deterministically.
func jsonMarshal(m map[string]jsontext.Value) ([]byte, error) {
	return json.Marshal(m, json.Deterministic(true))
}
