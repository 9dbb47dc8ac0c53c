package cross_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/parleyhq/parley/dialects"
	parleyv1 "github.com/parleyhq/parley/gen/parley/v1"
	"github.com/parleyhq/parley/translate"
	"github.com/parleyhq/parley/translate/converse"
	"github.com/parleyhq/parley/translate/eventstream"
	"github.com/parleyhq/parley/translate/internal/dialecttest"
	"github.com/parleyhq/parley/translate/internal/sdkcheck"
	"github.com/parleyhq/parley/translate/sse"
)

// upstreamOnly describes the dialects Parley speaks only to upstreams,
// by name, for the table.
var upstreamOnly = map[string]*upstreamSide{
	"converse": {
		Upstream: converse.Upstream{},
		// An Anthropic model, so that reasoning settings have a form.
		Model: "anthropic.claude-sonnet-4-5-20250929-v1:0",
		SDKRequest: func(t testing.TB, out *translate.Outgoing) {
			sdkcheck.ConverseRequest(t, out.Path, out.Body, out.Stream)
		},
		ReadRequest: readConverse,
		ErrorHeader: http.Header{"X-Amzn-Errortype": {"ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/"}},
		Stream:      converseStream,
	},
}

// TestTableToUpstreamOnly crosses every client dialect with every dialect
// Parley speaks only to upstreams (Amazon Bedrock's Converse API) on the
// scenarios of TestTable, held to the same checks: the request Parley
// makes is read back by the upstream dialect's SDK and holds the
// scenario's content; the upstream's reply, its stream and its error
// reach the client's SDK with the scenario's answer.
func TestTableToUpstreamOnly(t *testing.T) {
	root := "../../testdata/cross_table"
	scenarios, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dialects.All() {
		if d.Client != nil || d.Upstream == nil {
			continue
		}
		b := upstreamOnly[d.Name()]
		if b == nil {
			t.Errorf("%s is spoken only to upstreams and has no description in upstreamOnly", d.Name())
			continue
		}
		n++
		for _, sc := range scenarios {
			for _, a := range dialecttest.All {
				t.Run(sc.Name()+"/"+a.Name()+"_to_"+d.Name(), func(t *testing.T) {
					c := tableCase{t: t, scenario: sc.Name(), dir: filepath.Join(root, sc.Name()), a: a, b: b, aName: a.Name(), bName: d.Name()}
					c.run()
				})
			}
		}
	}
	if n != len(upstreamOnly) {
		t.Errorf("upstreamOnly describes %d dialects, the list has %d spoken only to upstreams", len(upstreamOnly), n)
	}
}

// converseStream frames a recorded Converse stream (one server-sent event
// per event-stream message, as testdata/converse keeps them) as the
// service does and decodes it as the gateway does.
func converseStream(t testing.TB, recorded []byte, dec translate.StreamDecoder) iter.Seq2[*parleyv1.StreamEvent, error] {
	t.Helper()
	var framed bytes.Buffer
	r := sse.NewReader(bytes.NewReader(recorded), 0)
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("stream.sse: %v", err)
		}
		if err := eventstream.Encode(&framed, ev.Type, ev.Data); err != nil {
			t.Fatal(err)
		}
	}
	return translate.DecodeFramed(parleyv1.Dialect_DIALECT_CONVERSE, &framed, converse.OpenFrames, dec, translate.StreamLimits{}, nil, nil)
}

// readConverse reads a Converse request back into the canonical model,
// as far as the table's checks look: system text, turns of text, images,
// tool calls and results, tools, thinking and the answer's schema.
func readConverse(t testing.TB, out *translate.Outgoing) (*parleyv1.Request, error) {
	t.Helper()
	var w converse.Request
	if err := jsonv2.Unmarshal(out.Body, &w); err != nil {
		return nil, err
	}
	req := &parleyv1.Request{}
	for _, s := range w.System {
		if s.Text != nil {
			req.Instructions = append(req.Instructions, translate.TextPart(*s.Text))
		}
	}
	for _, m := range w.Messages {
		msg := &parleyv1.Message{Role: parleyv1.Role_ROLE_USER}
		if m.Role == "assistant" {
			msg.Role = parleyv1.Role_ROLE_ASSISTANT
		}
		for _, b := range m.Content {
			switch {
			case b.Text != nil:
				msg.Parts = append(msg.Parts, translate.TextPart(*b.Text))
			case b.Image != nil && b.Image.Source != nil:
				msg.Parts = append(msg.Parts, &parleyv1.Part{Kind: &parleyv1.Part_Media{Media: &parleyv1.Media{
					MimeType: "image/" + b.Image.Format, Source: &parleyv1.Media_Data{Data: b.Image.Source.Bytes}}}})
			case b.ToolUse != nil:
				msg.Parts = append(msg.Parts, &parleyv1.Part{Kind: &parleyv1.Part_ToolCall{ToolCall: &parleyv1.ToolCall{
					Id: b.ToolUse.ToolUseID, Name: b.ToolUse.Name, Arguments: string(b.ToolUse.Input)}}})
			case b.ToolResult != nil:
				tr := &parleyv1.ToolResult{CallId: b.ToolResult.ToolUseID}
				for _, c := range b.ToolResult.Content {
					if c.Text != nil {
						tr.Content = append(tr.Content, translate.TextPart(*c.Text))
					}
				}
				msg.Parts = append(msg.Parts, &parleyv1.Part{Kind: &parleyv1.Part_ToolResult{ToolResult: tr}})
			}
		}
		req.Messages = append(req.Messages, msg)
	}
	if tc := w.ToolConfig; tc != nil {
		for _, tool := range tc.Tools {
			if ts := tool.ToolSpec; ts != nil {
				req.Tools = append(req.Tools, &parleyv1.Tool{Kind: &parleyv1.Tool_Function{Function: &parleyv1.FunctionTool{
					Name: ts.Name, Description: ts.Description, Parameters: string(ts.InputSchema.JSON)}}})
			}
		}
	}
	var fields struct {
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens *int32 `json:"budget_tokens"`
		} `json:"thinking"`
	}
	if len(w.AdditionalModelRequestFields) > 0 {
		if err := json.Unmarshal(w.AdditionalModelRequestFields, &fields); err != nil {
			return nil, err
		}
	}
	if th := fields.Thinking; th != nil {
		rc := &parleyv1.ReasoningConfig{Mode: parleyv1.ReasoningMode_REASONING_MODE_DISABLED, BudgetTokens: th.BudgetTokens}
		if th.Type == "enabled" {
			rc.Mode = parleyv1.ReasoningMode_REASONING_MODE_ENABLED
		}
		req.Reasoning = rc
	}
	if oc := w.OutputConfig; oc != nil && oc.TextFormat != nil && oc.TextFormat.Structure.JSONSchema != nil {
		f := oc.TextFormat
		req.ResponseFormat = &parleyv1.ResponseFormat{Kind: parleyv1.ResponseFormatKind_RESPONSE_FORMAT_KIND_JSON_SCHEMA, Schema: f.Structure.JSONSchema.Schema}
	}
	return req, nil
}
