package cloudtest

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/eventstream"
)

// The Converse API of the Bedrock fake: Converse, ConverseStream and
// CountTokens. Parley has no client side of this dialect to decode a
// request or render a reply with, so the fake reads requests into the
// dialect's wire types and writes the service's replies itself, in the
// shapes of the service's API reference (the AWS SDK for Go's
// bedrockruntime schemas).

// converseToolUseID is the id of the calls the fake's models make, of the
// form the service gives its own.
const converseToolUseID = "tooluse_FakeConverse01"

// idPattern is the service's rule for tool-use ids and tool names.
var idPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// converseInput is what Converse and CountTokens both check: the
// conversation, its system prompt, tools and model request fields.
type converseInput struct {
	messages []converse.Message
	system   []converse.SystemBlock
	tools    *converse.ToolConfig
	fields   jsontext.Value
	config   *converse.InferenceConfig // nil for CountTokens
}

// converse answers Converse (whole) and ConverseStream for model id.
func (b *Bedrock) converse(w http.ResponseWriter, id string, stream bool, body []byte) {
	var req converse.Request
	// Parley builds the body from these very types, so a member they do
	// not have (a "model", a "stream") is a mistake the test should see.
	if err := json.Unmarshal(body, &req, json.RejectUnknownMembers(true)); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again: "+err.Error())
		return
	}
	in := &converseInput{messages: req.Messages, system: req.System, tools: req.ToolConfig, fields: req.AdditionalModelRequestFields, config: req.InferenceConfig}
	if err := in.check(id); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	blocks, stop := in.reply(id)
	if !stream {
		out, err := json.Marshal(converse.Response{
			Output:     &converse.Output{Message: &converse.Message{Role: "assistant", Content: blocks}},
			StopReason: stop,
			Usage:      converseUsage(),
			Metrics:    &converse.Metrics{LatencyMs: new(int64(12))},
		})
		if err != nil {
			awsError(w, http.StatusInternalServerError, "InternalServerException", err.Error())
			return
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	w.Header().Set("Content-Type", eventstream.ContentType)
	w.WriteHeader(http.StatusOK)
	writeConverseStream(w, blocks, stop)
}

// countTokens answers CountTokens for a Converse request's input.
func (b *Bedrock) countTokens(w http.ResponseWriter, id string, body []byte) {
	var req converse.CountRequest
	if err := json.Unmarshal(body, &req, json.RejectUnknownMembers(true)); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", "Malformed input request, please reformat your input and try again: "+err.Error())
		return
	}
	c := req.Input.Converse
	if c == nil || len(c.Messages) == 0 {
		awsError(w, http.StatusBadRequest, "ValidationException", "input.converse.messages is required")
		return
	}
	// Only Anthropic's models count tokens on Bedrock.
	if !anthropicModel(id) {
		awsError(w, http.StatusBadRequest, "ValidationException", "The provided model doesn't support counting tokens.")
		return
	}
	in := &converseInput{messages: c.Messages, system: c.System, tools: c.ToolConfig, fields: c.AdditionalModelRequestFields}
	if err := in.check(id); err != nil {
		awsError(w, http.StatusBadRequest, "ValidationException", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, fmt.Appendf(nil, `{"inputTokens":%d}`, ConverseTokens(c)))
}

// ConverseTokens is the count the fake's CountTokens gives a Converse
// request's input: a token for every four characters of its text (the
// turns' text, tool inputs and results, reasoning, the system prompt and
// the tool specifications), at least 1.
func ConverseTokens(c *converse.CountConverse) int64 {
	var n int
	count := func(s string) { n += utf8.RuneCountInString(s) }
	for _, s := range c.System {
		if s.Text != nil {
			count(*s.Text)
		}
	}
	for _, m := range c.Messages {
		for _, b := range m.Content {
			switch {
			case b.Text != nil:
				count(*b.Text)
			case b.ToolUse != nil:
				count(b.ToolUse.Name)
				count(string(b.ToolUse.Input))
			case b.ToolResult != nil:
				for _, rc := range b.ToolResult.Content {
					if rc.Text != nil {
						count(*rc.Text)
					}
					count(string(rc.JSON))
				}
			case b.ReasoningContent != nil && b.ReasoningContent.ReasoningText != nil:
				count(b.ReasoningContent.ReasoningText.Text)
			}
		}
	}
	if c.ToolConfig != nil {
		for _, t := range c.ToolConfig.Tools {
			if s := t.ToolSpec; s != nil {
				count(s.Name)
				count(s.Description)
				count(string(s.InputSchema.JSON))
			}
		}
	}
	return max(int64(n/4), 1)
}

// reply is the fake's answer, by the rule of Reply: the tool said
// something, or the model calls the first tool, or it echoes the last
// user text; reasoning first when the request turns thinking on.
func (in *converseInput) reply(id string) ([]converse.ContentBlock, string) {
	var blocks []converse.ContentBlock
	if th, _ := in.thinking(); th.on() {
		blocks = append(blocks, converse.ContentBlock{ReasoningContent: &converse.ReasoningContent{
			ReasoningText: &converse.ReasoningText{Text: "thinking on bedrock", Signature: Signature("bedrock", id)},
		}})
	}
	stop := "end_turn"
	switch result, tool := in.lastToolResult(), in.firstTool(); {
	case result != "":
		blocks = append(blocks, converse.ContentBlock{Text: new("bedrock " + id + ": the tool said " + result)})
	case tool != "":
		blocks = append(blocks, converse.ContentBlock{ToolUse: &converse.ToolUseBlock{
			ToolUseID: converseToolUseID, Name: tool, Input: jsontext.Value(`{"city":"Paris"}`),
		}})
		stop = "tool_use"
	default:
		blocks = append(blocks, converse.ContentBlock{Text: new("bedrock " + id + ": " + in.lastUserText())})
	}
	return blocks, stop
}

func (in *converseInput) lastUserText() string {
	for i := len(in.messages) - 1; i >= 0; i-- {
		if in.messages[i].Role != "user" {
			continue
		}
		var b strings.Builder
		for _, c := range in.messages[i].Content {
			if c.Text != nil {
				b.WriteString(*c.Text)
			}
		}
		if b.Len() > 0 {
			return b.String()
		}
	}
	return "(no user text)"
}

func (in *converseInput) firstTool() string {
	if in.tools == nil {
		return ""
	}
	for _, t := range in.tools.Tools {
		if t.ToolSpec != nil {
			return t.ToolSpec.Name
		}
	}
	return ""
}

func (in *converseInput) lastToolResult() string {
	for i := len(in.messages) - 1; i >= 0; i-- {
		for _, c := range in.messages[i].Content {
			if tr := c.ToolResult; tr != nil {
				var b strings.Builder
				for _, rc := range tr.Content {
					if rc.Text != nil {
						b.WriteString(*rc.Text)
					}
				}
				return b.String()
			}
		}
	}
	return ""
}

func converseUsage() *converse.Usage {
	return &converse.Usage{InputTokens: new(int64(11)), OutputTokens: new(int64(7)), TotalTokens: new(int64(18))}
}

// writeConverseStream writes a reply as ConverseStream does: AWS
// event-stream messages, flushed one by one, in the service's order. Each
// event carries the "p" padding the service adds to hide the sizes of
// its events, which a reader must ignore.
func writeConverseStream(w http.ResponseWriter, blocks []converse.ContentBlock, stop string) {
	flusher, _ := w.(http.Flusher)
	pad := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0"
	n := 0
	send := func(typ string, payload map[string]any) bool {
		n++
		payload["p"] = pad[:1+n%len(pad)]
		body, err := json.Marshal(payload, json.Deterministic(true))
		if err != nil || eventstream.Encode(w, typ, body) != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	if !send("messageStart", map[string]any{"role": "assistant"}) {
		return
	}
	for i, b := range blocks {
		var deltas []map[string]any
		switch {
		case b.ToolUse != nil:
			// Only a tool call opens with contentBlockStart; its input
			// follows as JSON text in pieces.
			start := map[string]any{"toolUse": map[string]any{"toolUseId": b.ToolUse.ToolUseID, "name": b.ToolUse.Name}}
			if !send("contentBlockStart", map[string]any{"contentBlockIndex": i, "start": start}) {
				return
			}
			first, rest := halves(string(b.ToolUse.Input))
			deltas = []map[string]any{{"toolUse": map[string]any{"input": first}}, {"toolUse": map[string]any{"input": rest}}}
		case b.ReasoningContent != nil:
			rt := b.ReasoningContent.ReasoningText
			deltas = []map[string]any{{"reasoningContent": map[string]any{"text": rt.Text}}, {"reasoningContent": map[string]any{"signature": rt.Signature}}}
		case b.Text != nil:
			first, rest := halves(*b.Text)
			deltas = []map[string]any{{"text": first}, {"text": rest}}
		}
		for _, d := range deltas {
			if !send("contentBlockDelta", map[string]any{"contentBlockIndex": i, "delta": d}) {
				return
			}
		}
		if !send("contentBlockStop", map[string]any{"contentBlockIndex": i}) {
			return
		}
	}
	if !send("messageStop", map[string]any{"stopReason": stop}) {
		return
	}
	send("metadata", map[string]any{"usage": converseUsage(), "metrics": map[string]any{"latencyMs": 12}})
}

// halves splits s in two at a character boundary near its middle.
func halves(s string) (string, string) {
	i := len(s) / 2
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], s[i:]
}
